---@brief
--- The chat: a markdown scratch buffer with the conversation along the active path (the messages
--- of `sessionTree/context`) and an input buffer under it. Selecting a user or custom message in
--- the tree prefills the input; `<CR>` in normal mode or `:SessionSend` appends the input as a user
--- message at the leaf (`sessionTree/append`). Follows the session live like the panel.

local client = require('sessiontree.client')
local config = require('sessiontree.config')
local protocol = require('sessiontree.protocol')

local M = {}

---@class sessiontree.ChatState
---@field uri string|nil
---@field conv_buf integer|nil
---@field input_buf integer|nil
---@field conv_win integer|nil
---@field input_win integer|nil
---@field draws integer
---@field revision integer|nil
M.state = { draws = 0 }

---@param uri string|nil
---@return string|nil
local function panel_uri(uri)
  return uri or require('sessiontree.panel').state.uri
end

---@param content any a message's `content` (string or blocks)
---@param out string[]
local function content_lines(content, out)
  if type(content) == 'string' then
    vim.list_extend(out, vim.split(content, '\n', { plain = true }))
    return
  end
  if type(content) ~= 'table' then
    return
  end
  for _, block in ipairs(content) do
    if type(block) == 'table' then
      if block.type == 'text' and block.text then
        vim.list_extend(out, vim.split(block.text, '\n', { plain = true }))
      elseif block.type == 'toolCall' then
        local ok, args = pcall(vim.json.encode, block.arguments or {})
        table.insert(out, '`' .. tostring(block.name) .. '` ' .. (ok and args or ''))
      elseif block.type == 'thinking' then
        table.insert(out, '> _(thinking)_')
      elseif block.type == 'image' then
        table.insert(out, '_(image)_')
      end
    end
  end
end

--- One message of the context as markdown lines (presentation only; the server chose the messages).
---@param msg table
---@return string[]
function M.message_lines(msg)
  local out = {}
  local role = msg.role or '?'
  local title = role
  if role == 'assistant' and msg.model then
    title = 'assistant · ' .. msg.model
  elseif role == 'toolResult' then
    title = 'tool result · ' .. tostring(msg.toolName or '')
  elseif role == 'custom' or msg.customType then
    title = tostring(msg.customType or 'custom')
  elseif role == 'bashExecution' then
    title = 'bash · ' .. tostring(msg.command or '')
  elseif role == 'branchSummary' then
    title = 'branch summary'
  elseif role == 'compactionSummary' then
    title = 'compaction summary'
  end
  table.insert(out, '## ' .. title)
  table.insert(out, '')
  if msg.summary then
    content_lines(msg.summary, out)
  end
  if role == 'bashExecution' then
    table.insert(out, '```')
    content_lines(msg.output or '', out)
    table.insert(out, '```')
  else
    content_lines(msg.content, out)
  end
  table.insert(out, '')
  return out
end

---@param name string
---@param ft string
---@return integer
local function scratch(name, ft)
  local buf = vim.api.nvim_create_buf(false, true)
  pcall(vim.api.nvim_buf_set_name, buf, name)
  vim.bo[buf].buftype = 'nofile'
  vim.bo[buf].bufhidden = 'hide'
  vim.bo[buf].swapfile = false
  vim.bo[buf].filetype = ft
  return buf
end

local function ensure_bufs()
  local st = M.state
  if not (st.conv_buf and vim.api.nvim_buf_is_valid(st.conv_buf)) then
    st.conv_buf = scratch('sessiontree://chat', 'markdown')
    vim.bo[st.conv_buf].modifiable = false
  end
  if not (st.input_buf and vim.api.nvim_buf_is_valid(st.input_buf)) then
    st.input_buf = scratch('sessiontree://input', 'markdown')
  end
  for _, buf in ipairs({ st.conv_buf, st.input_buf }) do
    vim.keymap.set('n', '<CR>', M.send, { buffer = buf, desc = 'sessiontree: send the input' })
    vim.keymap.set('n', 'q', M.close, { buffer = buf, desc = 'sessiontree: close the chat' })
  end
end

---@return boolean
function M.is_open()
  local st = M.state
  return st.conv_win ~= nil and vim.api.nvim_win_is_valid(st.conv_win)
end

--- Opens the chat for session `uri` (default: the panel's session): conversation above, input below.
---@param uri string|nil
function M.open(uri)
  local st = M.state
  uri = panel_uri(uri)
  if not uri then
    vim.notify('sessiontree: no session open (:SessionTree first)', vim.log.levels.WARN)
    return
  end
  st.uri = uri
  ensure_bufs()
  if not M.is_open() then
    -- Open in the editor area, beside the panel: split an editor window, or make a column.
    local panel = require('sessiontree.panel')
    local target = nil
    for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
      if w ~= panel.state.win and vim.api.nvim_win_get_config(w).relative == '' then
        target = w
        break
      end
    end
    if target then
      vim.api.nvim_set_current_win(target)
      -- An empty, unnamed window is reused rather than split.
      local b = vim.api.nvim_win_get_buf(target)
      local empty = vim.api.nvim_buf_get_name(b) == ''
        and not vim.bo[b].modified
        and vim.api.nvim_buf_line_count(b) == 1
        and vim.api.nvim_buf_get_lines(b, 0, 1, false)[1] == ''
      if not empty then
        vim.cmd('rightbelow vsplit')
      end
    else
      vim.cmd(config.options.panel.position == 'right' and 'topleft vsplit' or 'botright vsplit')
    end
    st.conv_win = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_buf(st.conv_win, st.conv_buf)
    vim.wo[st.conv_win].wrap = true
    vim.wo[st.conv_win].linebreak = true
    vim.wo[st.conv_win].winbar = '%#SessionTreeHeader# chat %#SessionTreeHeaderInfo#· <CR> sends the input below'
    vim.cmd(string.format('belowright %dsplit', config.options.chat.input_height))
    st.input_win = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_buf(st.input_win, st.input_buf)
    vim.wo[st.input_win].winbar = '%#SessionTreeHeaderInfo# message · <CR> in normal mode or :SessionSend'
    vim.wo[st.input_win].winfixheight = true
    if panel.is_open() then
      vim.api.nvim_win_set_width(panel.state.win, config.options.panel.width)
    end
  end
  vim.api.nvim_set_current_win(st.input_win)
  M.refresh()
end

--- Closes the chat windows (the input text stays for next time).
function M.close()
  local st = M.state
  for _, win in ipairs({ st.input_win, st.conv_win }) do
    if win and vim.api.nvim_win_is_valid(win) and #vim.api.nvim_list_wins() > 1 then
      vim.api.nvim_win_close(win, true)
    end
  end
  st.conv_win, st.input_win = nil, nil
end

--- Redraws the conversation from `sessionTree/context`.
---@param done fun(err: table|nil)|nil
function M.refresh(done)
  local st = M.state
  if not st.uri or not (st.conv_buf and vim.api.nvim_buf_is_valid(st.conv_buf)) then
    return
  end
  local uri = st.uri
  -- The chat shows the messages only: the model-facing text stays on the server.
  client.request(protocol.CONTEXT, { uri = uri, withText = false }, function(err, result)
    if err then
      vim.notify('sessiontree: context: ' .. client.describe(err), vim.log.levels.ERROR)
    elseif uri == st.uri and vim.api.nvim_buf_is_valid(st.conv_buf) then
      local lines = {}
      for _, msg in ipairs(result.messages or {}) do
        vim.list_extend(lines, M.message_lines(msg))
      end
      if #lines == 0 then
        lines = { '_(empty: the next message starts the conversation)_' }
      end
      vim.bo[st.conv_buf].modifiable = true
      vim.api.nvim_buf_set_lines(st.conv_buf, 0, -1, false, lines)
      vim.bo[st.conv_buf].modifiable = false
      st.revision = result.revision
      st.draws = st.draws + 1
      if M.is_open() then
        vim.api.nvim_win_set_cursor(st.conv_win, { #lines, 0 })
      end
    end
    if done then
      done(err)
    end
  end)
end

--- The input text.
---@return string
function M.input_text()
  local st = M.state
  if not (st.input_buf and vim.api.nvim_buf_is_valid(st.input_buf)) then
    return ''
  end
  return table.concat(vim.api.nvim_buf_get_lines(st.input_buf, 0, -1, false), '\n')
end

--- Puts `text` into the input (a selected user or custom message comes back for editing).
---@param uri string|nil
---@param text string
function M.prefill(uri, text)
  local st = M.state
  st.uri = panel_uri(uri)
  ensure_bufs()
  vim.api.nvim_buf_set_lines(st.input_buf, 0, -1, false, vim.split(text or '', '\n', { plain = true }))
  if config.options.chat.open_on_select and not M.is_open() then
    M.open(st.uri)
  else
    M.refresh()
  end
end

--- Appends the input as a user message at the leaf, then clears the input.
---@param text string|nil the text to send instead of the input's
---@param done fun(err: table|nil, result: table|nil)|nil
function M.send(text, done)
  local st = M.state
  if type(text) ~= 'string' then
    text = nil
  end
  local uri = st.uri or panel_uri(nil)
  if not uri then
    vim.notify('sessiontree: no session open (:SessionTree first)', vim.log.levels.WARN)
    return
  end
  local from_input = text == nil
  text = text or M.input_text()
  if vim.trim(text) == '' then
    vim.notify('sessiontree: nothing to send', vim.log.levels.WARN)
    return
  end
  client.request(protocol.APPEND, { uri = uri, kind = 'user', text = text }, function(err, result)
    if err then
      vim.notify('sessiontree: send: ' .. client.describe(err), vim.log.levels.ERROR)
    else
      if from_input and st.input_buf and vim.api.nvim_buf_is_valid(st.input_buf) then
        vim.api.nvim_buf_set_lines(st.input_buf, 0, -1, false, {})
      end
      vim.notify('sessiontree: sent as ' .. tostring(result.entryId))
      M.refresh()
    end
    if done then
      done(err, result)
    end
  end)
end

client.on(protocol.DID_CHANGE, function(params)
  local st = M.state
  -- A closed chat reads the context again when it opens.
  if M.is_open() and require('sessiontree.panel').same_uri(params.uri, st.uri) and params.revision ~= st.revision then
    M.refresh()
  end
end)

return M
