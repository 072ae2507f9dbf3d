---@brief
--- The agent's dialogs (`sessionTree/agentDialog`: an extension inside the agent asks the user):
--- `vim.ui.select` for a choice and for yes/no, `vim.ui.input` for text. Neovim (0.11) runs a
--- server request's handler in a coroutine, so the answer waits for the user without blocking the
--- editor; where it does not (0.10), the dialog is answered "cancelled" at once, so the agent
--- never hangs. A dismissed dialog, or one the agent gave up on (`timeoutMs`), is "cancelled".

local M = {}

--- What was asked and answered last (tests).
---@type table|nil
M.last = nil

--- Shows the dialog with `vim.ui`; `done(answer)` gets the protocol's AgentDialogResult.
---@param p table protocol AgentDialogParams
---@param done fun(answer: table)
function M.show(p, done)
  local settled = false
  local function finish(answer)
    if settled then
      return
    end
    settled = true
    M.last = { dialog = p.dialog, title = p.title, options = p.options, answer = answer }
    done(answer)
  end
  local timeout = tonumber(p.timeoutMs)
  if timeout and timeout > 0 then
    vim.defer_fn(function()
      finish({ cancelled = true })
    end, timeout)
  end
  local title = (p.title and p.title ~= '') and p.title or 'The agent asks'
  local message = type(p.message) == 'string' and p.message ~= '' and p.message or nil
  local prompt = title .. (message and (' — ' .. message) or '')
  if p.dialog == 'select' then
    vim.ui.select(p.options or {}, { prompt = prompt }, function(choice)
      finish(choice and { value = choice } or { cancelled = true })
    end)
  elseif p.dialog == 'confirm' then
    vim.ui.select({ 'Yes', 'No' }, { prompt = prompt }, function(choice)
      finish(choice and { confirmed = choice == 'Yes' } or { cancelled = true })
    end)
  else
    local default = type(p.prefill) == 'string' and p.prefill or nil
    vim.ui.input({ prompt = prompt .. ': ', default = default }, function(value)
      finish(value and { value = value } or { cancelled = true })
    end)
  end
end

--- The handler's answer: waits (yielding the handler's coroutine) for the user.
---@param p table
---@return table
function M.answer(p)
  local co, is_main = coroutine.running()
  if not co or is_main then
    return { cancelled = true }
  end
  local answer
  local waiting = false
  M.show(p, function(a)
    answer = a
    if waiting then
      -- Resumed from the main loop, never before the handler yielded.
      vim.schedule(function()
        coroutine.resume(co)
      end)
    end
  end)
  if answer == nil then
    waiting = true
    coroutine.yield()
  end
  return answer or { cancelled = true }
end

return M
