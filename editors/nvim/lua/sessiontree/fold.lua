---@brief
--- Folding in the panel, as pi's `/tree` folds (omp sessions fold by the same rule; the server
--- lays the rows out): the folded entries of each session are kept here and sent with every
--- `sessionTree/rows` (`folded`), so a fold survives appends, refreshes and the windows fetched
--- around the cursor; changing the filter or the search clears them, as pi does. The keys are
--- pi's: `h` folds a foldable row, anywhere else it moves up to the start of the branch segment;
--- `l` unfolds a folded row, anywhere else it moves down to the next segment (the server finds
--- where: `segment`). `zc` folds the row or the branch the cursor is in, `zo` unfolds, `za`
--- toggles, `zR` unfolds everything.

local panel = require('sessiontree.panel')

local M = {}

--- Folded entry ids by session URI, in the order they were folded.
---@type table<string, string[]>
M.by_uri = {}

--- The folded ids of `uri` to send (`nil` when none).
---@param uri string|nil
---@return string[]|nil
function M.list(uri)
  local ids = uri and M.by_uri[uri]
  if ids and #ids > 0 then
    return ids
  end
  return nil
end

--- Whether `id` is folded in `uri`.
---@param uri string|nil
---@param id string|nil
---@return boolean
function M.is_folded(uri, id)
  return id ~= nil and vim.tbl_contains(M.list(uri) or {}, id)
end

--- Unfolds everything in `uri` (a filter or search change does it, as in pi).
---@param uri string|nil
function M.clear(uri)
  if uri then
    M.by_uri[uri] = nil
  end
end

--- The row under the cursor, with an id (a row without one cannot be folded or moved from).
---@return table|nil
local function current()
  local row = panel.selected_row()
  if row and row.id then
    return row
  end
  return nil
end

--- Folds or unfolds `row` and redraws with the cursor on it.
---@param row table
---@param folded boolean
local function set(row, folded)
  local st = panel.state
  local ids = M.by_uri[st.uri] or {}
  ids = vim.tbl_filter(function(id)
    return id ~= row.id
  end, ids)
  if folded then
    table.insert(ids, row.id)
  end
  M.by_uri[st.uri] = ids
  st.selection = row.id
  panel.refresh()
end

--- Moves the cursor by branch segments (`up` or `down`), as pi's fold keys do on rows they do not
--- fold; `done(row)` gets the row it ended on.
---@param way 'up'|'down'
---@param done fun(row: table|nil)|nil
function M.move(way, done)
  local row = current()
  if not row then
    return
  end
  panel.state.selection = row.id
  panel.refresh(function(err)
    if done and not err then
      done(panel.selected_row())
    end
  end, { segment = way })
end

--- `h` (pi's Ctrl+← / Alt+←): fold a foldable row, else move up to the start of the segment.
function M.fold_or_up()
  local row = current()
  if not row then
    return
  end
  if row.foldable and not row.folded then
    set(row, true)
  else
    M.move('up')
  end
end

--- `l` (pi's Ctrl+→ / Alt+→): unfold a folded row, else move down to the next segment.
function M.unfold_or_down()
  local row = current()
  if not row then
    return
  end
  if row.folded then
    set(row, false)
  else
    M.move('down')
  end
end

--- `zc`: fold the row; on a row that cannot fold, the branch it is in (the start of its segment).
function M.fold()
  local row = current()
  if not row or row.folded then
    return
  end
  if row.foldable then
    set(row, true)
    return
  end
  M.move('up', function(start)
    if start and start.id ~= row.id and start.foldable and not start.folded then
      set(start, true)
    end
  end)
end

--- `zo`: unfold the row.
function M.unfold()
  local row = current()
  if row and row.folded then
    set(row, false)
  end
end

--- `za`: unfold a folded row, else fold as `zc`.
function M.toggle()
  local row = current()
  if row and row.folded then
    set(row, false)
  else
    M.fold()
  end
end

--- `zR`: unfold everything in the session.
function M.unfold_all()
  local st = panel.state
  if M.list(st.uri) then
    M.clear(st.uri)
    panel.refresh()
  end
end

return M
