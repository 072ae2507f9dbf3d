-- A session omp keeps in Redis, in Neovim: a real redis-server of the spec's own (Debian's, as
-- scripts/install-test-deps.sh installs it) named in setup({ stores = … }); :SessionOpen offers
-- the store's session beside the files, the panel shows it as the server draws it, a label set
-- with L lands in the store and the real omp (its SessionManager with RedisSessionStorage, under
-- Bun: scripts/testing/omp-redis.ts) reloads it, and a line another writer appends reaches the
-- panel live.
local here = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:gsub('^@', ''), ':p:h')
local H = dofile(here .. '/support/helpers.lua')
local A = H.agents()

local PATH = '/home/me/.omp/agent/sessions/-proj/2025-01-01T00-00-00-000Z_c06.jsonl'
local KEY = 'omp:sessions:file:' .. PATH

--- A free loopback port.
local function free_port()
  local tcp = vim.uv.new_tcp()
  tcp:bind('127.0.0.1', 0)
  local port = tcp:getsockname().port
  tcp:close()
  return port
end

H.run(function()
  H.check(vim.fn.executable('redis-server') == 1, 'redis-server is installed (scripts/install-test-deps.sh)')
  H.check(vim.fn.executable('redis-cli') == 1, 'redis-cli is installed (with redis-server)')
  local port = tostring(free_port())
  local dir = H.workspace({})
  local server = vim.system({
    'redis-server',
    '--port',
    port,
    '--bind',
    '127.0.0.1',
    '--save',
    '',
    '--appendonly',
    'no',
    '--dir',
    dir,
  })
  -- The spec's redis-server goes with it, whatever happens.
  H.cleanup(function()
    server:kill(9)
    server:wait(5000)
  end)
  local function cli(args, stdin)
    local cmd = { 'redis-cli', '-p', port }
    vim.list_extend(cmd, args)
    return vim.system(cmd, { stdin = stdin, text = true }):wait()
  end
  H.check(
    H.wait(function()
      return cli({ 'PING' }).stdout == 'PONG\n'
    end, 10000),
    'the redis-server answers'
  )
  local text = table.concat(vim.fn.readfile(H.fixture('c06-branch-basic/omp/session.jsonl'), 'b'), '\n') .. '\n'
  cli({ '-x', 'SET', KEY }, text)
  cli({ 'HSET', 'omp:sessions:meta', PATH, tostring(os.time() * 1000) })

  H.setup(dir, { stores = { { url = 'redis://127.0.0.1:' .. port, list_all = true } } })
  vim.cmd('runtime plugin/sessiontree.lua')
  local offered
  vim.ui.select = function(items, _, on_choice)
    offered = items
    for _, s in ipairs(items) do
      if s.uri:match('^redis://') then
        return on_choice(s)
      end
    end
    on_choice(nil)
  end
  local uri = 'redis://127.0.0.1:' .. port .. '/0' .. PATH
  local panel = require('sessiontree.panel')
  H.check(H.command('SessionOpen', 15000), ':SessionOpen opens the chosen session')
  H.check(offered and #offered == 1 and offered[1].uri == uri, 'the store session is offered by its URI', offered)
  H.check(
    offered and require('sessiontree').describe_session(offered[1]):find('Plan a trip', 1, true) ~= nil,
    'named by its first message',
    offered and require('sessiontree').describe_session(offered[1])
  )
  H.check(panel.state.uri == uri, 'the panel shows the store session', panel.state.uri)
  H.check(panel.header():find('session of 2025-01-01', 1, true) ~= nil, 'titled by its time', panel.header())
  local _, drawn = H.server_lines('default', '')
  H.check(vim.deep_equal(H.panel_lines(), drawn.lines), 'the panel lines are the server lines', H.panel_lines())

  -- L labels the row under the cursor: the label line lands in the store.
  vim.ui.input = function(_, on_confirm)
    on_confirm('from neovim')
  end
  H.goto_row('2ececf0f')
  H.press('L')
  H.check(
    H.wait(function()
      return (cli({ 'GET', KEY }).stdout or ''):find('"label":"from neovim"', 1, true) ~= nil
    end),
    'the label is written into the store'
  )

  -- The real omp reloads the session from the store: the label is on the entry it was set on.
  local bin = A.bin()
  local omp_redis = { bin .. '/bun', H.repo .. '/scripts/testing/omp-redis.ts' }
  local reload_cmd = vim.list_extend(omp_redis, { 'reload', 'redis://127.0.0.1:' .. port, 'omp:sessions:', PATH })
  local omp_package = vim.fs.dirname(bin) .. '/node_modules/@oh-my-pi/pi-coding-agent'
  local reload = vim.system(reload_cmd, { text = true, env = { OMP_PACKAGE_DIR = omp_package } }):wait(120000)
  local ok_json, reloaded = pcall(vim.json.decode, reload.stdout or '')
  H.check(
    reload.code == 0 and ok_json and reloaded.labels and reloaded.labels['2ececf0f'] == 'from neovim',
    'omp reloads the label written here',
    { code = reload.code, stdout = reload.stdout, stderr = reload.stderr }
  )

  -- Another writer (an agent on omp's SDK) appends: the panel shows the new entry.
  local line = '{"type":"message","id":"feedbeef","parentId":"662d009f","timestamp":"2025-01-01T00:00:09.000Z",'
    .. '"message":{"role":"user","content":"appended in redis","timestamp":1735689609000}}\n'
  cli({ 'APPEND', KEY, line })
  H.check(
    H.wait(function()
      return table.concat(H.panel_lines(), '\n'):find('appended in redis', 1, true) ~= nil
    end, 15000),
    'a line appended in the store reaches the panel',
    H.panel_lines()
  )
end)
