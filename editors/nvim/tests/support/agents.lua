-- The real agents for the specs: pi and omp as scripts/install-agents.sh installs them (the spec
-- fails when they cannot be), the tests' loopback model server (scripts/testing/model-server.mjs)
-- whose answers follow rules the spec writes, and a home folder whose agents' only model is that
-- server (scripts/testing/agent-home.mjs). The Neovim process takes that home's environment, so
-- the server it starts, and the agents the server starts, run offline against the model server.
-- Loaded through the support module: `local A = H.agents()`.

local H = ...
local A = {}

--- Runs a command to its end; its stdout, or an error naming it.
---@param cmd string[]
---@param opts table|nil vim.system options
---@return string
local function run(cmd, opts)
  local res = vim.system(cmd, vim.tbl_extend('force', { text = true }, opts or {})):wait(600000)
  assert(
    res.code == 0,
    table.concat(cmd, ' ') .. ' failed (' .. tostring(res.code) .. '): ' .. (res.stderr or '') .. (res.stdout or '')
  )
  return res.stdout or ''
end

--- The folder with the `pi`, `omp` and `bun` launchers (installs them on first use).
---@return string
function A.bin()
  local out = run({ 'bash', H.repo .. '/scripts/install-agents.sh' })
  local lines = vim.split(vim.trim(out), '\n')
  local bin = lines[#lines]
  assert(vim.fn.executable(bin .. '/pi') == 1 and vim.fn.executable(bin .. '/omp') == 1, 'no agents in ' .. bin)
  return bin
end

---@class sessiontree.test.ModelServer
---@field url string
---@field rules string the rules file (rewrite it to change the answers)
---@field log string every request received, one JSON line each
---@field proc vim.SystemObj

--- Starts the model server with `rules` (see the script's header); it stops when the spec ends.
---@param dir string
---@param rules table
---@return sessiontree.test.ModelServer
function A.model_server(dir, rules)
  local server = { rules = dir .. '/model-rules.json', log = dir .. '/model-requests.jsonl' }
  vim.fn.writefile({ vim.json.encode(rules) }, server.rules)
  local first
  server.proc = vim.system(
    { 'node', H.repo .. '/scripts/testing/model-server.mjs', '--rules', server.rules, '--log', server.log },
    {
      stdin = true,
      text = true,
      stdout = function(_, data)
        if data and not first then
          first = data
        end
      end,
    }
  )
  assert(
    vim.wait(20000, function()
      return first ~= nil
    end, 20),
    'the model server did not start'
  )
  H.cleanup(function()
    A.stop(server)
  end)
  server.url = vim.json.decode(vim.split(first, '\n')[1]).url
  return server
end

--- Replaces the model server's rules.
---@param server sessiontree.test.ModelServer
---@param rules table
function A.set_rules(server, rules)
  vim.fn.writefile({ vim.json.encode(rules) }, server.rules)
end

--- The chat requests the model server received so far (their bodies).
---@param server sessiontree.test.ModelServer
---@return table[]
function A.requests(server)
  local out = {}
  if vim.fn.filereadable(server.log) == 1 then
    for _, line in ipairs(vim.fn.readfile(server.log)) do
      local ok, v = pcall(vim.json.decode, line)
      if ok then
        table.insert(out, v.body)
      end
    end
  end
  return out
end

--- Stops the model server.
---@param server sessiontree.test.ModelServer|nil
function A.stop(server)
  if server and server.proc then
    pcall(function()
      server.proc:write(nil)
      server.proc:kill('sigterm')
    end)
  end
end

--- Makes `dir`/home the agents' home with the model server as their only model, a git project
--- for them to work in, and puts this Neovim (and what it starts) in that environment.
---@param dir string
---@param server sessiontree.test.ModelServer
---@return { home: string, project: string, env: table<string, string> }
function A.home(dir, server)
  local home = dir .. '/home'
  run({ 'node', H.repo .. '/scripts/testing/agent-home.mjs', '--home', home, '--url', server.url })
  local project = dir .. '/project'
  vim.fn.mkdir(project, 'p')
  run({ 'git', 'init', '-q' }, { cwd = project })
  local env = {
    HOME = home,
    PI_OFFLINE = '1',
    XDG_RUNTIME_DIR = home .. '/run',
    XDG_CONFIG_HOME = home .. '/.config',
    XDG_DATA_HOME = home .. '/.local/share',
    XDG_CACHE_HOME = home .. '/.cache',
    PATH = vim.env.PATH,
  }
  for k, v in pairs(env) do
    vim.env[k] = v
  end
  return { home = home, project = project, env = env }
end

---@class sessiontree.test.Live
---@field dir string the workspace (`H.workspace`)
---@field bin string the folder with the agents' launchers
---@field model sessiontree.test.ModelServer
---@field home string the agents' home
---@field project string the git project they work in

--- A workspace where the real agents answer from the model server with `rules`: the agents
--- installed, the model server started, this Neovim in the agents' home.
---@param rules table
---@return sessiontree.test.Live
function A.start(rules)
  local dir = H.workspace({})
  local bin = A.bin()
  local model = A.model_server(dir, rules)
  local env = A.home(dir, model)
  return { dir = dir, bin = bin, model = model, home = env.home, project = env.project }
end

--- Configures the plugin for the workspace with the real agents as the live agent, and defines
--- its commands.
---@param live sessiontree.test.Live
function A.setup(live)
  H.setup(live.dir, { agent = { pi_path = live.bin .. '/pi', omp_path = live.bin .. '/omp' } })
  vim.cmd('runtime plugin/sessiontree.lua')
end

--- Runs the agent once in print mode with `prompt` in the project, as a user would, writing its
--- session into the workspace's sessions folder; returns the session file it wrote.
---@param live sessiontree.test.Live
---@param agent 'pi'|'omp'
---@param prompt string
---@return string
function A.first_session(live, agent, prompt)
  local bin, project, sessions = live.bin, live.project, live.dir .. '/sessions'
  vim.fn.mkdir(sessions, 'p')
  local before = {}
  for _, f in ipairs(vim.fn.glob(sessions .. '/*.jsonl', true, true)) do
    before[f] = true
  end
  run({ bin .. '/' .. agent, '--session-dir', sessions, '-p', prompt }, { cwd = project, stdin = false })
  for _, f in ipairs(vim.fn.glob(sessions .. '/*.jsonl', true, true)) do
    if not before[f] then
      return f
    end
  end
  error(agent .. ' -p wrote no session in ' .. sessions)
end

--- The entries of a session file (its omp title slot skipped).
---@param file string
---@return table[]
function A.entries(file)
  local out = {}
  for _, line in ipairs(vim.fn.readfile(file)) do
    local ok, v = pcall(vim.json.decode, line)
    if ok and type(v) == 'table' and v.type then
      table.insert(out, v)
    end
  end
  return out
end

--- The session's message entries whose text (content string or text parts) matches `pattern`.
---@param file string
---@param pattern string
---@return table|nil
function A.message(file, pattern)
  for _, e in ipairs(A.entries(file)) do
    if e.type == 'message' and e.message then
      local c = e.message.content
      local text = type(c) == 'string' and c or ''
      if type(c) == 'table' then
        for _, part in ipairs(c) do
          if type(part) == 'table' and part.type == 'text' then
            text = text .. (part.text or '')
          end
        end
      end
      if text:find(pattern) then
        return e
      end
    end
  end
end

--- The first entry written under the message whose text matches `pattern` (its answer), and
--- that message.
---@param file string
---@param pattern string
---@return table|nil answer
---@return table|nil message
function A.answer_to(file, pattern)
  local message = A.message(file, pattern)
  if not message then
    return nil, nil
  end
  for _, e in ipairs(A.entries(file)) do
    if e.parentId == message.id then
      return e, message
    end
  end
  return nil, message
end

return A
