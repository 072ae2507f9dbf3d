---@brief
--- The chat's entries as buffer lines, drawn from the server's display blocks: a `## role`
--- heading per message, markdown as written, and what is long or secondary as one line with a
--- fold under it (thinking, a tool call's arguments, a tool result's whole text, a command's
--- output), closed until the user opens it. Pure: returns lines, folds (0-based, end inclusive,
--- keyed so the chat keeps what the user opened) and highlights.

local M = {}

--- Highlight groups of the chat and what they link to by default.
M.groups = {
  SessionTreeChatRole = 'Title',
  SessionTreeChatThinking = 'Comment',
  SessionTreeChatTool = 'Special',
  SessionTreeChatToolError = 'DiagnosticError',
  SessionTreeChatNotice = 'DiagnosticWarn',
  SessionTreeChatError = 'DiagnosticError',
  SessionTreeChatStreaming = 'DiagnosticInfo',
}

--- (Re)defines the groups as default links.
function M.define_highlights()
  for name, link in pairs(M.groups) do
    vim.api.nvim_set_hl(0, name, { link = link, default = true })
  end
end

---@param text string|nil
---@return string[]
local function split(text)
  text = text or ''
  if text:sub(-1) == '\n' then
    text = text:sub(1, -2)
  end
  return vim.split(text, '\n', { plain = true })
end

--- One line (no newline may reach a buffer line).
---@param s string
---@return string
local function one_line(s)
  return (s:gsub('[\r\n]', ' '))
end

---@param n integer
---@param word string
---@return string
local function plural(n, word)
  return n .. ' ' .. word .. (n == 1 and '' or 's')
end

--- The heading of a message.
---@param item table
---@return string
function M.role_title(item)
  local detail = (item.detail and item.detail ~= vim.NIL and item.detail ~= '') and item.detail or nil
  local role = item.role
  if role == 'toolResult' then
    return 'tool result' .. (detail and (' · ' .. detail) or '')
  elseif role == 'bashExecution' then
    return 'command'
  elseif role == 'custom' then
    return detail or 'custom'
  elseif role == 'branchSummary' then
    return 'branch summary'
  elseif role == 'compactionSummary' then
    return 'compaction summary'
  elseif role == 'assistant' then
    return 'assistant'
  end
  return role .. (detail and (' · ' .. detail) or '')
end

---@class sessiontree.ChatDraw
---@field lines string[]
---@field folds { [1]: integer, [2]: integer, key: string }[] 0-based first and last line of each fold
---@field hls { [1]: integer, [2]: string }[] 0-based line and group (whole line)

---@return sessiontree.ChatDraw
function M.new_draw()
  return { lines = {}, folds = {}, hls = {} }
end

---@param d sessiontree.ChatDraw
---@param line string
---@param group string|nil
local function add(d, line, group)
  table.insert(d.lines, line)
  if group then
    table.insert(d.hls, { #d.lines - 1, group })
  end
end

--- A heading line with a fold of `body` lines under it (indented two spaces).
---@param d sessiontree.ChatDraw
---@param key string
---@param head string
---@param body string[]
---@param group string|nil
local function folded(d, key, head, body, group)
  add(d, head, group)
  local first = #d.lines - 1
  for _, l in ipairs(body) do
    add(d, '  ' .. l, group == 'SessionTreeChatThinking' and group or nil)
  end
  if #body > 0 then
    table.insert(d.folds, { first, #d.lines - 1, key = key })
  end
end

--- One display block.
---@param d sessiontree.ChatDraw
---@param b table
---@param key string
function M.block(d, b, key)
  local k = b.kind
  if k == 'text' or k == 'markdown' then
    for _, l in ipairs(split(b.text)) do
      add(d, l)
    end
  elseif k == 'thinking' then
    local body = split(b.text)
    folded(d, key, '▸ thinking (' .. plural(#body, 'line') .. ')', body, 'SessionTreeChatThinking')
  elseif k == 'toolCall' then
    folded(d, key, '⚙ ' .. one_line(b.summary or b.name or ''), split(b.arguments), 'SessionTreeChatTool')
  elseif k == 'toolResult' then
    local err = b.isError == true
    folded(
      d,
      key,
      (err and '✗ ' or '↳ ') .. one_line(b.summary or ''),
      split(b.text),
      err and 'SessionTreeChatToolError' or 'SessionTreeChatTool'
    )
  elseif k == 'image' then
    add(d, '[image: ' .. tostring(b.mimeType) .. ']', 'SessionTreeChatTool')
  elseif k == 'command' then
    local exit = (b.exitCode ~= nil and b.exitCode ~= vim.NIL) and (' · exit ' .. tostring(b.exitCode)) or ''
    folded(d, key, '$ ' .. one_line(b.command or '') .. exit, split(b.output), 'SessionTreeChatTool')
  elseif k == 'notice' then
    for _, l in ipairs(split(b.text)) do
      add(d, '> ' .. l, b.isError and 'SessionTreeChatError' or 'SessionTreeChatNotice')
    end
  end
end

--- One entry (a message, a running tool, a notice), then a blank line.
---@param d sessiontree.ChatDraw
---@param e table an entry of `conversation:entries()`
function M.entry(d, e)
  if e.kind == 'tool' then
    local state = e.done and (e.is_error and 'failed' or 'done') or 'running…'
    folded(
      d,
      e.key .. ':out',
      '⚙ ' .. one_line(e.name or '') .. ' · ' .. state,
      split(e.output),
      'SessionTreeChatTool'
    )
  elseif e.kind == 'notice' then
    local group = e.level == 'error' and 'SessionTreeChatError' or 'SessionTreeChatNotice'
    for _, l in ipairs(split(e.text)) do
      add(d, '> ' .. l, group)
    end
  else
    local item = e.item
    -- A tool result is one compact line: its block says everything a heading would.
    if item.role ~= 'toolResult' then
      add(d, '## ' .. M.role_title(item) .. (e.streaming and ' · streaming…' or ''), 'SessionTreeChatRole')
      add(d, '')
    end
    for i, b in ipairs(item.blocks or {}) do
      M.block(d, b, e.key .. ':' .. i)
    end
    if e.streaming and #(item.blocks or {}) == 0 then
      add(d, '…', 'SessionTreeChatStreaming')
    end
  end
  add(d, '')
end

--- Entries as lines, folds and highlights.
---@param entries table[]
---@return sessiontree.ChatDraw
function M.draw(entries)
  local d = M.new_draw()
  for _, e in ipairs(entries) do
    M.entry(d, e)
  end
  return d
end

return M
