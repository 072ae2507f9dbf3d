---@brief
--- The panel's query: the filter mode and the search text, and typing into the search (`/` maps
--- the printable keys to the search until `<CR>` or `<Esc>`). Each change asks the panel to redraw;
--- the server does the filtering and matching.

local config = require('sessiontree.config')
local panel = require('sessiontree.panel')

local M = {}

--- The keys that type into the search while searching (printable ASCII).
---@return string[] lhs
---@return string[] chars
local function typing_keys()
  local lhs, chars = {}, {}
  for code = 32, 126 do
    local ch = string.char(code)
    local key = ch
    if ch == ' ' then
      key = '<Space>'
    elseif ch == '<' then
      key = '<lt>'
    elseif ch == '|' then
      key = '<Bar>'
    elseif ch == '\\' then
      key = '<Bslash>'
    end
    table.insert(lhs, key)
    table.insert(chars, ch)
  end
  return lhs, chars
end

--- While searching, printable keys type into the search; `<CR>` and `<Esc>` keep their meaning.
---@param buf integer
local function attach_typing(buf)
  local lhs, chars = typing_keys()
  for i, key in ipairs(lhs) do
    local ch = chars[i]
    vim.keymap.set('n', key, function()
      M.type(ch)
    end, { buffer = buf, nowait = true, silent = true, desc = 'sessiontree: search' })
  end
end

--- Leaves search typing: removes the typing keys and maps the panel keys again.
---@param buf integer
local function detach_typing(buf)
  local lhs = typing_keys()
  for _, key in ipairs(lhs) do
    pcall(vim.keymap.del, 'n', key, { buffer = buf })
  end
  require('sessiontree.actions').attach(buf)
end

--- Sets the filter mode.
---@param mode sessiontree.FilterMode
function M.set_filter(mode)
  -- As pi: a filter change unfolds everything.
  require('sessiontree.fold').clear(panel.state.uri)
  panel.state.filter = mode
  panel.update_header()
  panel.refresh()
end

--- Moves to the next (`step` 1) or previous (-1) filter of `filters`.
---@param step integer
function M.cycle_filter(step)
  local list = config.options.filters
  local i = 1
  for k, mode in ipairs(list) do
    if mode == panel.state.filter then
      i = k
    end
  end
  M.set_filter(list[((i - 1 + step) % #list) + 1])
end

local search_timer = nil

--- Sets the search text and redraws. On a session whose rows take a while to compute, fast typing
--- is coalesced so the server does not queue one answer per key.
---@param text string
function M.set(text)
  local st = panel.state
  -- As pi: typing or clearing a search unfolds everything.
  if text ~= st.search then
    require('sessiontree.fold').clear(st.uri)
  end
  st.search = text
  panel.update_header()
  if search_timer and not search_timer:is_closing() then
    search_timer:stop()
    search_timer:close()
  end
  search_timer = nil
  if (st.last_ms or 0) < 80 then
    panel.refresh()
    return
  end
  search_timer = vim.defer_fn(function()
    search_timer = nil
    panel.refresh()
  end, 150)
end

--- Starts typing into the search: printable keys go to the search until `<CR>` or `<Esc>`.
function M.start()
  local st = panel.state
  if not st.buf then
    return
  end
  st.searching = true
  attach_typing(st.buf)
  panel.update_header()
end

--- Stops typing into the search; the search text stays.
function M.stop()
  local st = panel.state
  if st.searching and st.buf and vim.api.nvim_buf_is_valid(st.buf) then
    detach_typing(st.buf)
  end
  st.searching = false
  panel.update_header()
end

--- Adds typed characters to the search.
---@param chars string
function M.type(chars)
  M.set(panel.state.search .. chars)
end

--- Backspace: removes the last character of the search (leaving search typing when it empties).
function M.backspace()
  local st = panel.state
  if st.search == '' then
    M.stop()
    return
  end
  local n = vim.fn.strchars(st.search)
  M.set(vim.fn.strcharpart(st.search, 0, n - 1))
end

return M
