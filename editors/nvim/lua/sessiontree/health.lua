---@brief
--- `:checkhealth sessiontree`: the Neovim version, the server binary and its protocol version,
--- whether pi and omp can run (the live agent), the session folders found for the working
--- directory, and whether a client is attached.

local M = {}

--- `vim.health`, looked up at each check (tests replace it).
local health = setmetatable({}, {
  __index = function(_, key)
    return vim.health[key]
  end,
})

---@param cmd string[]
---@return string|nil version line
local function binary_version(cmd)
  local ok, res = pcall(function()
    return vim.system({ cmd[1], '--version' }, { text = true }):wait(5000)
  end)
  if ok and res and res.code == 0 then
    return vim.trim(res.stdout or '')
  end
  return nil
end

--- Whether pi and omp can run, as the server looks for them (the `agent` options, then the
--- `SESSIONTREE_PI_PATH` / `SESSIONTREE_OMP_PATH` variables, then `PATH`).
function M.check_agents()
  local agent = require('sessiontree.config').options.agent or {}
  if agent.disabled then
    health.warn('the live agent is turned off (agent.disabled): <CR> in the chat appends without an answer')
    return
  end
  for _, a in ipairs({
    { name = 'pi', option = 'pi_path', env = 'SESSIONTREE_PI_PATH', pkg = '@mariozechner/pi-coding-agent' },
    { name = 'omp', option = 'omp_path', env = 'SESSIONTREE_OMP_PATH', pkg = '@oh-my-pi/pi-coding-agent' },
  }) do
    local configured = agent[a.option]
    local from = 'agent.' .. a.option
    if not (type(configured) == 'string' and configured ~= '') then
      configured = vim.env[a.env]
      from = a.env
    end
    local exe
    if type(configured) == 'string' and configured ~= '' then
      exe = vim.fn.exepath(configured)
      if exe == '' then
        health.error(
          string.format('%s: `%s` (from %s) does not exist or cannot be run', a.name, configured, from),
          { 'set agent.' .. a.option .. ' in setup() to the ' .. a.name .. ' executable' }
        )
      end
    else
      exe = vim.fn.exepath(a.name)
      from = 'PATH'
      if exe == '' then
        health.warn(
          string.format('%s not found on PATH: the chat appends to %s sessions without an answer', a.name, a.name),
          { 'npm i -g ' .. a.pkg, 'or set agent.' .. a.option .. ' in setup()' }
        )
      end
    end
    if exe and exe ~= '' then
      health.ok(string.format('%s: %s (from %s)', a.name, exe, from))
    end
  end
end

function M.check()
  health.start('sessiontree: Neovim')
  if vim.fn.has('nvim-0.10') == 1 then
    health.ok('Neovim ' .. tostring(vim.version()))
  else
    health.error('Neovim ' .. tostring(vim.version()) .. ' is too old: sessiontree needs 0.10 or newer')
  end
  if vim.fn.has('nvim-0.11') == 0 then
    health.info('vim.lsp.enable("sessiontree") needs 0.11; the panel and commands work on 0.10')
  end

  health.start('sessiontree: server')
  local client = require('sessiontree.client')
  local cmd, where = client.resolve_cmd()
  local runnable = false
  if not cmd then
    health.error('server binary not found: ' .. where, {
      'cargo install --path server/lsp (puts `sessiontree` on PATH)',
      'or setup({ cmd = { "/path/to/sessiontree", "lsp" } })',
    })
  elseif vim.fn.executable(cmd[1]) == 0 then
    health.error('server command is not executable: ' .. table.concat(cmd, ' ') .. ' (from ' .. where .. ')')
  else
    runnable = true
    local version = binary_version(cmd)
    health.ok(
      'server: ' .. table.concat(cmd, ' ') .. ' (from ' .. where .. ')' .. (version and (' — ' .. version) or '')
    )
  end

  -- The config `vim.lsp.enable('sessiontree')` starts (lsp/sessiontree.lua, with the user's overrides).
  if vim.fn.has('nvim-0.11') == 1 then
    local got, lsp_config = pcall(function()
      return vim.lsp.config.sessiontree
    end)
    local lsp_cmd = got and type(lsp_config) == 'table' and lsp_config.cmd or nil
    if type(lsp_cmd) == 'table' then
      if lsp_cmd[1] and vim.fn.executable(lsp_cmd[1]) == 1 then
        health.ok("vim.lsp.config('sessiontree') runs " .. table.concat(lsp_cmd, ' '))
      else
        health.error(
          "vim.lsp.config('sessiontree') runs `"
            .. tostring(lsp_cmd[1])
            .. "`, which is not executable: vim.lsp.enable('sessiontree') cannot start the server",
          {
            "vim.lsp.config('sessiontree', { cmd = { '/path/to/sessiontree', 'lsp' } })",
            'or put `sessiontree` on PATH',
          }
        )
      end
    end
  end

  local c = client.get()
  if not c then
    health.info('no sessiontree client running yet (it starts with :SessionTree)')
    if runnable then
      local started, err = client.ensure()
      if not started then
        health.error('could not start the server: ' .. tostring(err))
      else
        vim.wait(5000, function()
          return started.initialized == true
        end, 20)
        c = started
      end
    end
  end
  if c then
    local exp = client.server_experimental()
    if exp then
      health.ok(
        string.format(
          'protocol version %s; features: %s',
          tostring(exp.version),
          table.concat(exp.features or {}, ', ')
        )
      )
    else
      health.error('the server did not announce experimental.sessionTree: is it a sessiontree server?')
    end
    local attached = vim.lsp.get_buffers_by_client_id and vim.lsp.get_buffers_by_client_id(c.id) or {}
    health.ok(string.format('client %d running (%d buffers attached)', c.id, #attached))
  end

  health.start('sessiontree: the live agent')
  M.check_agents()

  health.start('sessiontree: sessions')
  if c then
    local result, err = client.request_sync(
      require('sessiontree.protocol').LIST_SESSIONS,
      { folders = { vim.uri_from_fname(vim.fn.getcwd()) } },
      10000
    )
    if err then
      health.error('listSessions failed: ' .. client.describe(err))
    elseif not result or #(result.sessions or {}) == 0 then
      health.warn('no session files for ' .. vim.fn.getcwd(), {
        'run omp or pi in this folder, or add folders with setup({ extra_roots = { … } })',
      })
    else
      local folders = {}
      for _, s in ipairs(result.sessions) do
        folders[vim.fn.fnamemodify(s.path, ':h')] = (folders[vim.fn.fnamemodify(s.path, ':h')] or 0) + 1
      end
      for folder, n in pairs(folders) do
        health.ok(string.format('%d session(s) in %s', n, folder))
      end
    end
  end
  local panel = require('sessiontree.panel')
  if panel.state.uri then
    health.info('panel session: ' .. panel.state.uri)
  end
end

return M
