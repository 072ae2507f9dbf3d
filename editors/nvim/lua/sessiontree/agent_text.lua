---@brief
--- The live agent as the user meets it in the chat: its state in one line, what <CR> will do, and
--- a clear sentence for each of the agent's error kinds (with the option to set, where one helps).
--- The VS Code extension says the same (editors/vscode/src/agentText.ts). Pure: no buffers.

local M = {}

--- The `setup()` option that chooses the agent's executable.
---@param agent string|nil 'pi' | 'omp'
---@return string
function M.path_option(agent)
  return agent == 'pi' and 'agent.pi_path' or 'agent.omp_path'
end

---@param message string|nil
---@return boolean
local function turned_off(message)
  return message ~= nil and (message:find('disabled', 1, true) or message:find('turned off', 1, true)) ~= nil
end

--- Whether <CR> goes to the agent (else it appends without an answer).
---@param status table|nil a protocol AgentStatus
---@return boolean
function M.available(status)
  return status == nil or status.state ~= 'unavailable'
end

--- The option to set for a status that needs one.
---@param status table|nil
---@return string|nil
function M.status_option(status)
  if status and status.state == 'unavailable' then
    return turned_off(status.message) and 'agent.disabled' or M.path_option(status.agent)
  end
  return nil
end

--- What to change so that the agent runs (for an unavailable status).
---@param status table
---@return string
function M.status_advice(status)
  if turned_off(status.message) then
    return 'agent.disabled is set in setup()'
  end
  return 'set ' .. M.path_option(status.agent) .. ' in setup() to run the agent'
end

--- The agent's state in one line: `pi · idle · provider/model`.
---@param s table|nil
---@return string
function M.status_line(s)
  if not s then
    return ''
  end
  local who = s.source == 'terminal' and (s.agent .. ' (in your terminal)') or s.agent
  local model = (s.model and s.model ~= vim.NIL) and (' · ' .. s.model) or ''
  if s.state == 'none' then
    return who .. ' · not running (<CR> starts it)'
  elseif s.state == 'starting' then
    return who .. ' · starting…'
  elseif s.state == 'idle' then
    return who .. ' · idle' .. model
  elseif s.state == 'running' then
    return who .. ' · answering…' .. model
  elseif s.state == 'exited' then
    local msg = s.message ~= vim.NIL and s.message or nil
    return who .. ' · exited' .. (msg and (': ' .. msg) or '')
  end
  return who .. ' · unavailable'
end

--- What needs the user, when something does: why the agent cannot run, its last words.
---@param s table|nil
---@return string|nil
function M.status_detail(s)
  if not s then
    return nil
  end
  local msg = s.message ~= vim.NIL and s.message or nil
  if s.state == 'unavailable' then
    return (msg or (s.agent .. ' cannot run'))
      .. '. <CR> appends your message without an answer; '
      .. M.status_advice(s)
      .. '.'
  end
  local tail = type(s.stderrTail) == 'table' and s.stderrTail or {}
  if s.state == 'exited' and #tail > 0 then
    return table.concat(vim.list_slice(tail, math.max(1, #tail - 4)), '\n')
  end
  if s.source == 'terminal' and not s.armed then
    return 'The agent in your terminal has not let the editor move its leaf yet: press Enter on /sessiontree in its terminal.'
  end
  return nil
end

--- A failed prompt (or abort), as the user should read it, and the option to set.
---@param kind string|nil the error's `data.kind`
---@param message string
---@param agent string|nil
---@return string text
---@return string|nil option
function M.error_text(kind, message, agent)
  local name = agent or 'the agent'
  if kind == 'agentNotInstalled' then
    if turned_off(message) then
      return message .. ': agent.disabled is set in setup().', 'agent.disabled'
    end
    local option = M.path_option(agent)
    return message .. '. Set ' .. option .. ' in setup().', option
  elseif kind == 'agentFailed' then
    return name .. ' failed: ' .. message
  elseif kind == 'agentBusy' then
    return name .. ' is still answering: wait for it to finish, or stop it (<C-c> or :SessionStop).'
  elseif kind == 'agentNotArmed' then
    return name
      .. ' in your terminal has not let the editor move its leaf yet: press Enter on /sessiontree in its terminal (the bridge typed it into its input), then send again.'
  elseif kind == 'agentRunning' then
    return message .. '. Install the bridge (:SessionInstallBridge) and restart that agent, or use :SessionAppend.'
  end
  return message
end

return M
