---@brief
--- What the chat shows, as data: the conversation along the path (`sessionTree/transcript`,
--- display blocks rendered by the server) followed by what the agent streams now
--- (`sessionTree/agentEvent`: deltas appended to their message's block, tool progress, notices),
--- and the agent's state. Pure: the chat feeds it answers and events and draws `entries()`. The
--- streamed messages give way to the transcript once it holds them. (The VS Code extension's
--- `chatModel.ts` is the same model.)

local M = {}
M.__index = M

--- The newest transcript messages a finished streamed message is compared with.
local MATCH_WINDOW = 32

---@class sessiontree.Conversation
---@field uri string|nil
---@field transcript table[] protocol TranscriptItems
---@field omitted integer
---@field revision integer|nil
---@field status table|nil protocol AgentStatus
---@field running boolean between agentStart and agentEnd
---@field deltas integer deltas since the last prompt
---@field live table[]

---@return sessiontree.Conversation
function M.new()
  local self = setmetatable({}, M)
  self:reset(nil)
  self.notices = 0
  return self
end

--- Another session (or none): everything shown belongs to the old one.
---@param uri string|nil
function M:reset(uri)
  self.uri = uri
  self.transcript = {}
  self.omitted = 0
  self.revision = nil
  self.status = nil
  self.running = false
  self.deltas = 0
  self.live = {}
end

---@param a table
---@param b table
---@return boolean
local function same_message(a, b)
  return a.role == b.role and vim.deep_equal(a.blocks, b.blocks)
end

--- The keys of the finished live messages (pass them back with the transcript asked after).
---@return table<string, boolean>
function M:ended_keys()
  local out = {}
  for _, l in ipairs(self.live) do
    if l.kind == 'message' and l.item then
      out[l.key] = true
    end
  end
  return out
end

--- A transcript arrived, asked for when `ended` were the finished live messages: those it holds
--- leave the live part; once the agent is done all of them do, and so do finished tools.
---@param t table protocol TranscriptResult
---@param ended table<string, boolean>
function M:set_transcript(t, ended)
  self.transcript = t.items or {}
  self.omitted = t.omitted or 0
  self.revision = t.revision
  local recent = vim.list_slice(self.transcript, math.max(1, #self.transcript - MATCH_WINDOW + 1))
  local keep = {}
  for _, l in ipairs(self.live) do
    local stay = true
    if l.kind == 'message' and l.item and ended[l.key] then
      local held = false
      for _, r in ipairs(recent) do
        if same_message(r, l.item) then
          held = true
          break
        end
      end
      stay = self.running and not held
    elseif l.kind == 'tool' then
      stay = self.running or not l.done
    end
    if stay then
      table.insert(keep, l)
    end
  end
  self.live = keep
end

--- A prompt was sent: last turn's notices and errors go.
function M:start_turn()
  self.live = vim.tbl_filter(function(l)
    return l.kind ~= 'notice'
  end, self.live)
  self.deltas = 0
end

--- A notice of the chat's own (an append without an answer, a failed prompt).
---@param text string
---@param level 'info'|'warning'|'error'
---@return string change
function M:notice(text, level)
  self.notices = self.notices + 1
  table.insert(self.live, { kind = 'notice', key = 'n:' .. self.notices, text = text, level = level })
  return 'entries'
end

---@param n integer
---@return table|nil
function M:message(n)
  for _, l in ipairs(self.live) do
    if l.kind == 'message' and l.number == n then
      return l
    end
  end
end

---@param id string
---@return table|nil
function M:tool(id)
  for _, l in ipairs(self.live) do
    if l.kind == 'tool' and l.id == id then
      return l
    end
  end
end

---@param n integer
---@param role string
---@return table
function M:add_message(n, role)
  local m = { kind = 'message', key = 'm:' .. n, number = n, role = role, blocks = {}, item = nil }
  table.insert(self.live, m)
  return m
end

--- Applies one `agentEvent`; what changed: 'none', 'status', 'entries' (the list), or an entry's key.
---@param p table protocol AgentEventParams
---@return string change
---@return string|nil key
function M:apply(p)
  if p.uri ~= self.uri then
    return 'none'
  end
  local e = p.event or {}
  local kind = e.kind
  if kind == 'status' then
    self.status = e.status
    if e.status.state ~= 'running' then
      self.running = false
    end
    return 'status'
  elseif kind == 'agentStart' then
    self.running = true
    if self.status then
      self.status = vim.tbl_extend('force', self.status, { state = 'running' })
    end
    return 'status'
  elseif kind == 'agentEnd' then
    self.running = false
    if self.status and self.status.state == 'running' then
      self.status = vim.tbl_extend('force', self.status, { state = 'idle' })
    end
    return 'status'
  elseif kind == 'messageStart' then
    if self:message(e.message) then
      return 'none'
    end
    self:add_message(e.message, e.role)
    return 'entries'
  elseif kind == 'delta' then
    local m = self:message(e.message)
    local fresh = m == nil
    m = m or self:add_message(e.message, 'assistant')
    if m.item then
      return 'none'
    end
    local index = (e.block or 0) + 1
    local block = m.blocks[index]
    m.blocks[index] = {
      kind = e.delta == 'thinking' and 'thinking' or 'markdown',
      text = ((block and block.text) or '') .. (e.text or ''),
    }
    self.deltas = self.deltas + 1
    if fresh then
      return 'entries'
    end
    return 'entry', m.key
  elseif kind == 'messageEnd' then
    local m = self:message(e.message) or self:add_message(e.message, e.item.role)
    m.item = e.item
    m.role = e.item.role
    -- A tool's result arrived as a message: its progress line has done its job.
    local results = {}
    for _, b in ipairs(e.item.blocks or {}) do
      if b.kind == 'toolResult' then
        results[b.id] = true
      end
    end
    local before = #self.live
    self.live = vim.tbl_filter(function(l)
      return not (l.kind == 'tool' and results[l.id])
    end, self.live)
    if #self.live ~= before then
      return 'entries'
    end
    return 'entry', m.key
  elseif kind == 'toolStart' then
    table.insert(self.live, {
      kind = 'tool',
      key = 'tool:' .. e.toolCallId,
      id = e.toolCallId,
      name = e.name,
      output = '',
      done = false,
      is_error = false,
    })
    return 'entries'
  elseif kind == 'toolUpdate' then
    local t = self:tool(e.toolCallId)
    if not t then
      return 'none'
    end
    t.output = e.text or ''
    return 'entry', t.key
  elseif kind == 'toolEnd' then
    local t = self:tool(e.toolCallId)
    if not t then
      return 'none'
    end
    t.done = true
    t.is_error = e.isError == true
    return 'entry', t.key
  elseif kind == 'notice' then
    return self:notice(e.text or '', e.level or 'info')
  elseif kind == 'error' then
    return self:notice(e.message or 'the agent reported an error', 'error')
  elseif kind == 'exited' then
    self.running = false
    local code = (e.code == nil or e.code == vim.NIL) and 'a signal' or ('code ' .. tostring(e.code))
    local tail = type(e.stderrTail) == 'table' and table.concat(e.stderrTail, '\n') or ''
    return self:notice('The agent exited (' .. code .. ').' .. (tail ~= '' and ('\n' .. tail) or ''), 'error')
  end
  return 'none'
end

---@param l table
---@return table
local function entry_of(l)
  if l.kind ~= 'message' then
    return l
  end
  if l.item then
    return { kind = 'message', key = l.key, item = l.item, streaming = false }
  end
  local blocks = {}
  local max = 0
  for i in pairs(l.blocks) do
    max = math.max(max, i)
  end
  for i = 1, max do
    if l.blocks[i] then
      table.insert(blocks, l.blocks[i])
    end
  end
  return { kind = 'message', key = l.key, item = { role = l.role, blocks = blocks }, streaming = true }
end

--- The transcript's entries, oldest first.
---@return table[]
function M:transcript_entries()
  local out = {}
  for i, item in ipairs(self.transcript) do
    local id = item.entryId ~= vim.NIL and item.entryId or nil
    table.insert(out, { kind = 'message', key = id and ('e:' .. id) or ('t:' .. i), item = item, streaming = false })
  end
  return out
end

--- What streams (and what the agent said) after the transcript, oldest first.
---@return table[]
function M:live_entries()
  local out = {}
  for _, l in ipairs(self.live) do
    table.insert(out, entry_of(l))
  end
  return out
end

--- Everything to draw, oldest first.
---@return table[]
function M:entries()
  return vim.list_extend(self:transcript_entries(), self:live_entries())
end

return M
