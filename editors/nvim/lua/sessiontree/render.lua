---@brief
--- Drawing: the highlight groups (all `default` links, so a colorscheme or the user can relink
--- them), the header text, and the server's rows written into a buffer with extmarks. It draws
--- what the server sent (`lines`, `rows`) and computes nothing about the tree.

local M = {}

M.ns = vim.api.nvim_create_namespace('sessiontree')
M.ns_cursor = vim.api.nvim_create_namespace('sessiontree.cursor')

--- Highlight groups and what they link to by default.
M.groups = {
  SessionTreeHeader = 'Title',
  SessionTreeHeaderInfo = 'Comment',
  SessionTreeSearch = 'IncSearch',
  SessionTreeConnector = 'NonText',
  SessionTreeActivePath = 'Special',
  SessionTreeInactive = 'Comment',
  SessionTreeLeaf = 'DiagnosticOk',
  SessionTreeFold = 'Special',
  SessionTreeLabel = 'Label',
  SessionTreeMatch = 'Search',
  SessionTreeCursor = 'CursorLine',
  SessionTreeRoleUser = 'Function',
  SessionTreeRoleAssistant = 'String',
  SessionTreeRoleTool = 'Type',
  SessionTreeRoleSummary = 'PreProc',
  SessionTreeRoleCustom = 'Constant',
  SessionTreeRoleOther = 'Comment',
}

--- (Re)defines the groups as default links; groups the user defined stay as they are.
function M.define_highlights()
  for name, link in pairs(M.groups) do
    vim.api.nvim_set_hl(0, name, { link = link, default = true })
  end
end

---@param row table a protocol `Row`
---@return string group
function M.role_group(row)
  if row.kind == 'message' then
    local role = row.role
    if role == 'user' then
      return 'SessionTreeRoleUser'
    elseif role == 'assistant' then
      return 'SessionTreeRoleAssistant'
    elseif role == 'toolResult' or role == 'bashExecution' then
      return 'SessionTreeRoleTool'
    end
    return 'SessionTreeRoleOther'
  elseif row.kind == 'branch_summary' or row.kind == 'compaction' then
    return 'SessionTreeRoleSummary'
  elseif row.kind == 'custom_message' then
    return 'SessionTreeRoleCustom'
  end
  return 'SessionTreeRoleOther'
end

--- Byte offset of character `char` (a Unicode scalar index) in `s`, clamped to `#s`.
---@param s string
---@param char integer
---@return integer
local function byte_of(s, char)
  local b = vim.fn.byteidxcomp(s, char)
  if b < 0 then
    return #s
  end
  return b
end

---@class sessiontree.HeaderState
---@field name string|nil
---@field filter string
---@field search string
---@field searching boolean
---@field total integer|nil
---@field busy string|nil
---@field problems integer|nil

--- The header: session name, filter, search (with a cursor while typing), row count.
---@param st sessiontree.HeaderState
---@return string
function M.header_text(st)
  local parts = { st.name or 'session' }
  table.insert(parts, 'filter: ' .. st.filter)
  if st.searching or st.search ~= '' then
    table.insert(parts, 'search: ' .. st.search .. (st.searching and '▏' or ''))
  end
  if st.total then
    table.insert(parts, st.total .. ' rows')
  end
  if st.problems then
    table.insert(parts, M.problems_text(st.problems))
  end
  if st.busy then
    table.insert(parts, st.busy)
  end
  return table.concat(parts, ' · ')
end

--- `1 problem`, `3 problems`.
---@param n integer
---@return string
function M.problems_text(n)
  return n .. (n == 1 and ' problem' or ' problems')
end

--- `text` cut to `width` display columns, ending in `…` when cut.
---@param text string
---@param width integer
---@return string
function M.cut(text, width)
  if vim.fn.strdisplaywidth(text) <= width then
    return text
  end
  local chars = vim.fn.strchars(text)
  local out = ''
  for i = 1, chars do
    local next_out = vim.fn.strcharpart(text, 0, i)
    if vim.fn.strdisplaywidth(next_out) > width - 1 then
      break
    end
    out = next_out
  end
  return out .. '…'
end

--- The fewest columns of the session name the winbar keeps when the panel is narrow.
M.MIN_NAME = 12

--- The header as a 'winbar' value (with highlight items, `%` escaped). With `width` (the panel's
--- columns), it fits: the search (what the user is typing) is shown whole, the row count and then
--- the default filter's name give way when room runs out, and the session name is cut at its end
--- (`…`) rather than losing its start, as Neovim's own truncation of an overlong bar would.
---@param st sessiontree.HeaderState
---@param width integer|nil
---@return string
function M.winbar(st, width)
  local function esc(s)
    return (s:gsub('%%', '%%%%'))
  end
  -- { text, highlight group } after the name, in order; `optional` ones go when room runs out.
  local info = {}
  -- The default filter is the one shown when none is named: it gives way before the name does.
  table.insert(info, { text = '· filter: ' .. st.filter .. ' ', optional = st.filter == 'default' and 2 or nil })
  if st.searching or st.search ~= '' then
    table.insert(info, { text = '· ' })
    table.insert(info, {
      text = 'search: ' .. st.search .. (st.searching and '▏' or ''),
      hl = 'SessionTreeSearch',
    })
    table.insert(info, { text = ' ' })
  end
  if st.total then
    table.insert(info, { text = '· ' .. st.total .. ' rows ', optional = 1 })
  end
  if st.problems then
    table.insert(info, { text = '· ' })
    table.insert(info, { text = M.problems_text(st.problems), hl = 'WarningMsg' })
    table.insert(info, { text = ' ' })
  end
  if st.busy then
    table.insert(info, { text = '· ' .. st.busy })
  end
  local name = st.name or 'session'
  if width then
    local function used()
      local n = 2 -- the spaces around the name
      for _, part in ipairs(info) do
        n = n + vim.fn.strdisplaywidth(part.text)
      end
      return n
    end
    -- Parts give way in their order (the row count, then a default filter) while the name would
    -- be cut below its minimum.
    for level = 1, 2 do
      if used() + math.min(vim.fn.strdisplaywidth(name), M.MIN_NAME) <= width then
        break
      end
      info = vim.tbl_filter(function(part)
        return part.optional ~= level
      end, info)
    end
    if used() + vim.fn.strdisplaywidth(name) > width then
      info = vim.tbl_filter(function(part)
        return part.optional ~= 1
      end, info)
    end
    name = M.cut(name, math.max(M.MIN_NAME, width - used()))
  end
  local text = '%#SessionTreeHeader# ' .. esc(name) .. ' %#SessionTreeHeaderInfo#'
  for _, part in ipairs(info) do
    if part.hl then
      text = text .. '%#' .. part.hl .. '#' .. esc(part.text) .. '%#SessionTreeHeaderInfo#'
    else
      text = text .. esc(part.text)
    end
  end
  return text
end

--- Where the row's `text` starts in its line: the line is the server's cursor column, connectors
--- and markers, then the text (maybe cut with `…`). Found by the text itself, so the plugin does not
--- depend on how wide the server's gutter is.
---@param line string
---@param row table
---@return integer bytes before the text
function M.text_start(line, row)
  local text = row.text or ''
  if text ~= '' then
    if #line >= #text and line:sub(-#text) == text then
      return #line - #text
    end
    local head = vim.fn.strcharpart(text, 0, 6)
    local s = line:find(head, 1, true)
    if s then
      return s - 1
    end
  end
  return math.min(#(row.prefix or ''), #line)
end

--- Drawn after the leaf's row (the panel keeps room for it when rows are cut to its width).
M.LEAF_MARK = ' ← leaf'

--- Drawn after a folded row holding the leaf (the leaf's row is hidden under it).
M.LEAF_FOLDED_MARK = ' ← leaf (folded)'

--- Where omp's row `row` ends its gutter in `line` (bytes), when the line shows it whole: the
--- cursor column, then the prefix.
---@param line string
---@param row table
---@return integer|nil
local function after_prefix(line, row)
  local cursor = line:sub(1, #M.MARKER) == M.MARKER and #M.MARKER + 1 or 2
  local prefix = row.prefix or ''
  if line:sub(cursor + 1, cursor + #prefix) == prefix then
    return cursor + #prefix
  end
  return nil
end

--- The fold marker the panel draws itself on an omp row (omp draws none; pi's lines carry their
--- own), placed as pi places its markers: over the `─` of the row's connector (`├⊟`, `└⊞`), or
--- before the text of a folded row without one (`⊞ `). `⊞`: folded; `⊟`: foldable, on rows with
--- a connector only (as pi). Returns the marker, the byte column and whether it covers the `─`.
---@param line string
---@param row table
---@return string|nil marker
---@return integer|nil col
---@return boolean|nil overlay
function M.omp_fold_marker(line, row)
  if not (row.folded or row.foldable) then
    return nil
  end
  local at = after_prefix(line, row)
  if not at then
    return nil
  end
  local connector = (row.prefix or ''):sub(-#'─ ') == '─ '
  if connector then
    return row.folded and '⊞' or '⊟', at - #'─ ', true
  end
  if row.folded then
    return '⊞ ', at, false
  end
  return nil
end

--- The cursor marker the server draws in front of the selected row (`› `), if its lines have one.
M.MARKER = '›'

--- Whether the server's lines carry a cursor column: the selected row starts with the marker.
---@param lines string[]
---@param rows table[]
---@return boolean
function M.has_marker(lines, rows)
  for i, row in ipairs(rows) do
    if row.selected then
      return (lines[i] or ''):sub(1, #M.MARKER) == M.MARKER
    end
  end
  return false
end

--- Moves the server's cursor marker from line `from` to line `to` (0-based), as the server would
--- draw it for the new selection, without asking for every row again on each key.
---@param buf integer
---@param from integer|nil
---@param to integer|nil
function M.move_marker(buf, from, to)
  if from == to then
    return
  end
  vim.bo[buf].modifiable = true
  local count = vim.api.nvim_buf_line_count(buf)
  if from and from >= 0 and from < count then
    local line = vim.api.nvim_buf_get_lines(buf, from, from + 1, false)[1]
    if line:sub(1, #M.MARKER) == M.MARKER then
      vim.api.nvim_buf_set_text(buf, from, 0, from, #M.MARKER, { ' ' })
    end
  end
  if to and to >= 0 and to < count then
    local line = vim.api.nvim_buf_get_lines(buf, to, to + 1, false)[1]
    if line:sub(1, 1) == ' ' then
      vim.api.nvim_buf_set_text(buf, to, 0, to, 1, { M.MARKER })
    end
  end
  vim.bo[buf].modifiable = false
  vim.bo[buf].modified = false
end

--- The highlights of one row: `{ start_col, end_col, group, priority }` in bytes of `line`.
---@param line string the row's line as drawn
---@param row table the protocol `Row`
---@return { [1]: integer, [2]: integer, [3]: string, [4]: integer }[]
function M.row_highlights(line, row)
  local out = {}
  local plen = M.text_start(line, row)
  if plen > 0 then
    table.insert(out, { 0, plen, row.onActivePath and 'SessionTreeActivePath' or 'SessionTreeConnector', 100 })
  end
  if not row.onActivePath and #line > plen then
    table.insert(out, { plen, #line, 'SessionTreeInactive', 90 })
  end
  -- The label is written as `[label] ` before the role (in the gutter or at the text's start).
  local role_from = plen
  if row.label and row.label ~= '' then
    local ls, le = line:find('[' .. row.label .. ']', 1, true)
    if ls then
      table.insert(out, { ls - 1, le, 'SessionTreeLabel', 110 })
      role_from = math.max(plen, le)
    end
  end
  -- The role part: `user:`/`assistant:` for messages, `[kind…]` for the rest.
  local rest = line:sub(role_from + 1)
  local lead = #rest:match('^%s*')
  local role_len
  if rest:sub(lead + 1, lead + 1) == '[' then
    local close = rest:find(']', lead + 1, true)
    role_len = close and (close - lead) or nil
  elseif row.role and rest:sub(lead + 1, lead + #row.role + 1) == row.role .. ':' then
    role_len = #row.role + 1
  end
  if role_len then
    local start = role_from + lead
    table.insert(out, { start, start + role_len, M.role_group(row), 105 })
  end
  for _, m in ipairs(row.matches or {}) do
    local s = math.min(plen + byte_of(row.text, m.start), #line)
    local e = math.min(plen + byte_of(row.text, m['end']), #line)
    if e > s then
      table.insert(out, { s, e, 'SessionTreeMatch', 120 })
    end
  end
  return out
end

--- The rows drawn in each panel buffer, for the decoration provider.
---@type table<integer, table[]>
local drawn = {}

--- Writes `lines` into `buf`. Row highlights are drawn by a decoration provider for the visible
--- lines only, so a redraw costs the same on a 40 000-row session as on a small one.
---@param buf integer
---@param lines string[] the server's `lines`
---@param rows table[] the server's `rows` (same order)
---@param dialect string|nil the session's agent: omp rows get their fold markers drawn here
function M.draw(buf, lines, rows, dialect)
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].modified = false
  vim.api.nvim_buf_clear_namespace(buf, M.ns, 0, -1)
  drawn[buf] = rows
  for i, row in ipairs(rows) do
    local leaf_mark = row.isLeaf and M.LEAF_MARK or (row.folded and row.onActivePath and M.LEAF_FOLDED_MARK) or nil
    if leaf_mark then
      vim.api.nvim_buf_set_extmark(buf, M.ns, i - 1, 0, {
        virt_text = { { leaf_mark, 'SessionTreeLeaf' } },
        virt_text_pos = 'eol',
      })
    end
    if dialect == 'omp' then
      local marker, col, overlay = M.omp_fold_marker(lines[i] or '', row)
      if marker then
        vim.api.nvim_buf_set_extmark(buf, M.ns, i - 1, col, {
          virt_text = { { marker, 'SessionTreeFold' } },
          virt_text_pos = overlay and 'overlay' or 'inline',
        })
      end
    end
  end
end

--- Forgets a wiped buffer.
---@param buf integer
function M.forget(buf)
  drawn[buf] = nil
end

vim.api.nvim_set_decoration_provider(M.ns, {
  on_win = function(_, _, buf)
    return drawn[buf] ~= nil
  end,
  on_line = function(_, _, buf, lnum)
    local rows = drawn[buf]
    local row = rows and rows[lnum + 1]
    if not row then
      return
    end
    local line = vim.api.nvim_buf_get_lines(buf, lnum, lnum + 1, false)[1] or ''
    for _, h in ipairs(M.row_highlights(line, row)) do
      pcall(vim.api.nvim_buf_set_extmark, buf, M.ns, lnum, h[1], {
        end_col = h[2],
        hl_group = h[3],
        priority = h[4],
        ephemeral = true,
      })
    end
  end,
})

--- Marks the cursor row (a full-line highlight users can relink, instead of 'cursorline').
---@param buf integer
---@param lnum integer|nil 0-based
function M.cursor(buf, lnum)
  vim.api.nvim_buf_clear_namespace(buf, M.ns_cursor, 0, -1)
  if lnum and lnum >= 0 and lnum < vim.api.nvim_buf_line_count(buf) then
    vim.api.nvim_buf_set_extmark(buf, M.ns_cursor, lnum, 0, {
      line_hl_group = 'SessionTreeCursor',
      priority = 50,
    })
  end
end

return M
