---@brief
--- Rewind: the workspace's files at an entry's point (`sessionTree/rewind*`). Compare fills the
--- quickfix list with the files changed since the point and opens a `:diffthis` split per file
--- (the point's content on the left, read only); restore and undo ask first and show what changed.
--- The server does the work; this module only asks and shows.

local client = require('sessiontree.client')
local protocol = require('sessiontree.protocol')

local M = {}

--- At most this many diff tabs are opened by one compare (the quickfix list has every file).
M.MAX_DIFF_TABS = 8

--- Points by session URI: `{ [uri] = { [entryId] = point } }` (for the row marks).
---@type table<string, table<string, table>>
M.points = {}

local function notify(msg, level)
  vim.notify('sessiontree: ' .. msg, level or vim.log.levels.INFO)
end

local function panel()
  return require('sessiontree.panel')
end

--- The entry to act on: `id`, else the row under the cursor in the panel.
---@param id string|nil
---@return string|nil uri
---@return string|nil id
local function target(id)
  local st = panel().state
  if not st.uri then
    notify('no session in the panel (:SessionTree first)', vim.log.levels.WARN)
    return nil, nil
  end
  if id and id ~= '' then
    return st.uri, id
  end
  local row = panel().selected_row()
  if not row or not row.id then
    notify('put the cursor on an entry of the tree', vim.log.levels.WARN)
    return nil, nil
  end
  return st.uri, row.id
end

--- Which point was used, in words.
---@param used table a protocol `UsedRewindPoint`
local function describe_point(used)
  local p = used.point
  local words = string.format('%s (%s, %s)', p.entryId, p.moment, p.exact and 'exact' or 'approximate')
  if used.asked ~= p.entryId then
    words = words .. ', the nearest point above ' .. used.asked
  end
  return 'the point of ' .. words
end

--- Fetches the session's points (for the marks); `done(points_by_id)` when they are in.
---@param uri string
---@param done fun(points: table<string, table>)|nil
function M.refresh_points(uri, done)
  client.request(protocol.REWIND_POINTS, { uri = uri }, function(err, result)
    local by_id = {}
    if not err and result and result.available then
      for _, p in ipairs(result.points) do
        by_id[p.entryId] = p
      end
    end
    M.points[uri] = by_id
    if done then
      done(by_id)
    end
  end)
end

--- Redraws the panel's marks when the server recorded a point (points do not change the
--- session's revision).
client.on(protocol.DID_RECORD_REWIND_POINT, function(params)
  local st = panel().state
  local points = M.points[params.uri]
  if points then
    points[params.point.entryId] = params.point
  end
  if st.uri == params.uri and st.buf and vim.api.nvim_buf_is_valid(st.buf) then
    M.draw_marks(st.buf, st.uri, st.rows, st.revision)
  end
end)

--- Whether `id` has a point of its own (drawn as a mark on its row).
---@param uri string
---@param id string
---@return boolean
function M.has_point(uri, id)
  local points = M.points[uri]
  return points ~= nil and points[id] ~= nil and not points[id].pruned
end

--- The namespace of the marks drawn on rows that have a point.
M.ns = vim.api.nvim_create_namespace('sessiontree_rewind')
--- The mark (highlight group `SessionTreeRewindPoint`, linked to `Special`).
M.MARK = '◆'
vim.api.nvim_set_hl(0, 'SessionTreeRewindPoint', { link = 'Special', default = true })

--- The revision the marks of each session were fetched for.
---@type table<string, integer>
local marked_revision = {}

--- Draws a mark after each row whose entry has a point (fetching the points once per revision).
---@param buf integer the panel's buffer
---@param uri string
---@param rows table[] the rows drawn, in line order
---@param revision integer|nil
function M.draw_marks(buf, uri, rows, revision)
  local function draw()
    if not vim.api.nvim_buf_is_valid(buf) then
      return
    end
    vim.api.nvim_buf_clear_namespace(buf, M.ns, 0, -1)
    for i, row in ipairs(rows) do
      if row.id and M.has_point(uri, row.id) then
        pcall(vim.api.nvim_buf_set_extmark, buf, M.ns, i - 1, 0, {
          virt_text = { { ' ' .. M.MARK, 'SessionTreeRewindPoint' } },
          virt_text_pos = 'eol',
        })
      end
    end
  end
  if marked_revision[uri] == revision and M.points[uri] then
    draw()
    return
  end
  marked_revision[uri] = revision
  M.refresh_points(uri, draw)
end

--- Lines of a text as a buffer holds them (no empty last line for a final newline).
---@param text string
---@return string[]
local function lines_of(text)
  local lines = vim.split(text, '\n', { plain = true })
  if lines[#lines] == '' then
    table.remove(lines)
  end
  return lines
end

--- Opens a tab with the working file and, to its left, the file as the point holds it, both in
--- diff mode.
---@param uri string
---@param id string
---@param workspace string
---@param path string
function M.diff(uri, id, workspace, path)
  local result, err = client.request_sync(protocol.REWIND_FILE, { uri = uri, entryId = id, path = path })
  if err then
    notify('file at the point: ' .. client.describe(err), vim.log.levels.ERROR)
    return
  end
  vim.cmd('tabnew ' .. vim.fn.fnameescape(workspace .. '/' .. path))
  vim.cmd('diffthis')
  vim.cmd('leftabove vnew')
  local buf = vim.api.nvim_get_current_buf()
  vim.bo[buf].buftype = 'nofile'
  vim.bo[buf].bufhidden = 'wipe'
  vim.bo[buf].swapfile = false
  local lines = {}
  if result.exists then
    lines = result.text and lines_of(result.text) or { '(binary file)' }
  end
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  pcall(vim.api.nvim_buf_set_name, buf, 'sessiontree://point/' .. result.point.point.entryId .. '/' .. path)
  local ft = vim.filetype.match({ filename = path })
  if ft then
    vim.bo[buf].filetype = ft
  end
  vim.cmd('diffthis')
end

--- Compare the files with an entry's point: the quickfix list, and a diff tab per file.
---@param id string|nil entry id (default: the row under the cursor)
---@param done fun(result: table|nil)|nil
function M.compare(id, done)
  local uri, entry = target(id)
  if not uri then
    return
  end
  client.request(protocol.REWIND_COMPARE, { uri = uri, entryId = entry }, function(err, result)
    if err then
      notify('compare: ' .. client.describe(err), vim.log.levels.ERROR)
      if done then
        done(nil)
      end
      return
    end
    local items = {}
    for _, f in ipairs(result.files) do
      table.insert(
        items,
        { filename = result.workspace .. '/' .. f.path, lnum = 1, text = f.status .. ' since the point' }
      )
    end
    vim.fn.setqflist({}, ' ', {
      title = 'sessiontree: files changed since ' .. describe_point(result.point),
      items = items,
    })
    if #items == 0 then
      notify('no file differs from ' .. describe_point(result.point))
    else
      notify(#items .. ' file(s) changed since ' .. describe_point(result.point))
      for i = 1, math.min(#result.files, M.MAX_DIFF_TABS) do
        M.diff(uri, entry, result.workspace, result.files[i].path)
      end
      vim.cmd('copen')
    end
    if done then
      done(result)
    end
  end)
end

--- Shows what a restore or undo changed (notification and quickfix list).
---@param result table a protocol `RewindRestoreResult`
---@param what string
local function show_restored(result, what)
  local items = {}
  for _, f in ipairs(result.files) do
    table.insert(items, { filename = result.workspace .. '/' .. f.path, lnum = 1, text = f.action })
  end
  for _, f in ipairs(result.skipped) do
    table.insert(
      items,
      { filename = result.workspace .. '/' .. f.path, lnum = 1, text = 'left alone (' .. f.reason .. ')' }
    )
  end
  vim.fn.setqflist({}, ' ', { title = 'sessiontree: ' .. what, items = items })
  notify(what .. ': ' .. #result.files .. ' file(s) changed (:SessionRewindUndo puts them back)')
  vim.cmd('checktime')
end

--- Asks with the dry run's list, then runs `method`.
---@param method string
---@param params table
---@param question string
---@param what string
---@param done fun(result: table|nil)|nil
local function confirm_then(method, params, question, what, done)
  local dry = vim.tbl_extend('force', params, { dryRun = true })
  client.request(method, dry, function(err, preview)
    if err then
      notify(what .. ': ' .. client.describe(err), vim.log.levels.ERROR)
      if done then
        done(nil)
      end
      return
    end
    if #preview.files == 0 then
      notify(what .. ': no file differs; nothing to do')
      if done then
        done(preview)
      end
      return
    end
    local counts = { added = 0, changed = 0, deleted = 0 }
    for _, f in ipairs(preview.files) do
      counts[f.action] = counts[f.action] + 1
    end
    local prompt = string.format(
      '%s? %d changed, %d added, %d deleted (your current files are kept as the undo point)',
      question,
      counts.changed,
      counts.added,
      counts.deleted
    )
    vim.ui.select({ 'Restore the files', 'Cancel' }, { prompt = prompt }, function(_, idx)
      if idx ~= 1 then
        notify(what .. ': cancelled; nothing changed')
        if done then
          done(nil)
        end
        return
      end
      client.request(method, params, function(rerr, result)
        if rerr then
          notify(what .. ': ' .. client.describe(rerr), vim.log.levels.ERROR)
          if done then
            done(nil)
          end
          return
        end
        show_restored(result, what)
        if done then
          done(result)
        end
      end)
    end)
  end)
end

--- Restore the workspace's files to an entry's point (asks first).
---@param id string|nil
---@param done fun(result: table|nil)|nil
function M.restore(id, done)
  local uri, entry = target(id)
  if not uri then
    return
  end
  confirm_then(
    protocol.REWIND_RESTORE,
    { uri = uri, entryId = entry },
    'Restore the files to the point of ' .. entry,
    'restored the files to the point of ' .. entry,
    done
  )
end

--- Undo the last restore of the session's workspace (asks first).
---@param done fun(result: table|nil)|nil
function M.undo(done)
  local st = panel().state
  if not st.uri then
    notify('no session in the panel (:SessionTree first)', vim.log.levels.WARN)
    return
  end
  confirm_then(protocol.REWIND_UNDO, { uri = st.uri }, 'Undo the last restore', 'undid the last restore', done)
end

--- After a navigation to `id`: keep or restore the files, as `rewind.on_navigate` says (`ask`
--- asks when the entry has a point and files differ).
---@param uri string
---@param id string
function M.after_navigate(uri, id)
  local mode = (require('sessiontree.config').options.rewind or {}).on_navigate or 'ask'
  if mode == 'keep' then
    return
  end
  client.request(protocol.REWIND_COMPARE, { uri = uri, entryId = id }, function(err, result)
    if err or #result.files == 0 then
      return
    end
    local function restore()
      client.request(protocol.REWIND_RESTORE, { uri = uri, entryId = id }, function(rerr, restored)
        if rerr then
          notify('restore: ' .. client.describe(rerr), vim.log.levels.ERROR)
        else
          show_restored(restored, 'restored the files to ' .. describe_point(result.point))
        end
      end)
    end
    if mode == 'restore' then
      restore()
      return
    end
    local prompt = #result.files .. ' file(s) changed since ' .. describe_point(result.point)
    vim.ui.select({ 'Keep the current files', 'Restore the files to that point' }, { prompt = prompt }, function(_, idx)
      if idx == 2 then
        restore()
      end
    end)
  end)
end

return M
