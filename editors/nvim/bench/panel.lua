-- The panel's speed on a big session, as a user feels it: from the key (a filter change, a search,
-- clearing it) to the rows drawn in the panel buffer, in a headless Neovim with the real server.
-- Not a test (timing belongs here, not in the specs); prints one line per step: the median and
-- range of the runs, the server's share (request to answer) and the rows drawn.
--
-- usage: SESSIONTREE_BIN=target/release/sessiontree \
--          nvim --headless -u NONE -i NONE -l editors/nvim/bench/panel.lua SESSION.jsonl [RUNS] [MAX_ROWS]
-- (MAX_ROWS: the panel's `max_rows`, default the plugin's; 0 fetches every row.)
local here = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:gsub('^@', ''), ':p:h')
local plugin = vim.fn.fnamemodify(here, ':h')
vim.opt.runtimepath:prepend(plugin)
local file = assert(_G.arg[1], 'usage: panel.lua SESSION.jsonl [RUNS] [MAX_ROWS]')
file = vim.fn.fnamemodify(file, ':p')
local runs = tonumber(_G.arg[2] or '5')
local bin = assert(os.getenv('SESSIONTREE_BIN'), 'set SESSIONTREE_BIN')
local work = vim.fn.tempname()
vim.fn.mkdir(work, 'p')
vim.env.XDG_STATE_HOME = work .. '/state'
vim.o.columns, vim.o.lines = 160, 50
vim.cmd('runtime plugin/sessiontree.lua')
require('sessiontree').setup({
  cmd = { bin, 'lsp' },
  omp_agent_dir = work .. '/omp',
  pi_agent_dir = work .. '/pi',
  extra_roots = { vim.fn.fnamemodify(file, ':h') },
  panel = { max_rows = tonumber(_G.arg[3] or '') },
})
local panel = require('sessiontree.panel')
local search = require('sessiontree.search')
local st = panel.state

--- Runs `fn` and waits for the panel's next draw; returns the milliseconds from the call to the
--- drawn rows and the request's own round trip.
local function timed(fn)
  local before = st.draws
  local t0 = vim.uv.hrtime()
  fn()
  local ok = vim.wait(120000, function()
    return st.draws > before and panel.idle()
  end, 1)
  assert(ok, 'no draw within 120 s')
  return (vim.uv.hrtime() - t0) / 1e6, st.last_ms, #st.rows, st.total or -1
end

local function report(name, samples)
  table.sort(samples, function(a, b)
    return a[1] < b[1]
  end)
  local mid = samples[math.ceil(#samples / 2)]
  print(
    string.format(
      '%-28s %8.1f ms [%.1f-%.1f]  server %7.1f ms  rows %d of %d',
      name,
      mid[1],
      samples[1][1],
      samples[#samples][1],
      mid[2],
      mid[3],
      mid[4]
    )
  )
end

local open_ms = timed(function()
  vim.cmd('SessionTree ' .. vim.fn.fnameescape(file))
end)
print(string.format('%-28s %8.1f ms  rows %d of %d', 'open (first draw)', open_ms, #st.rows, st.total or -1))

local steps = {
  {
    'filter noTools',
    function()
      search.set_filter('noTools')
    end,
    function()
      search.set_filter('default')
    end,
  },
  {
    'filter userOnly',
    function()
      search.set_filter('userOnly')
    end,
    function()
      search.set_filter('default')
    end,
  },
  {
    'filter all',
    function()
      search.set_filter('all')
    end,
    function()
      search.set_filter('default')
    end,
  },
  {
    'search "pars"',
    function()
      search.set('pars')
    end,
    nil,
  },
  {
    'clear the search',
    function()
      search.set('')
    end,
    nil,
  },
}
local samples = {}
for _ = 1, runs do
  for i, step in ipairs(steps) do
    samples[i] = samples[i] or {}
    table.insert(samples[i], { timed(step[2]) })
    if step[3] then
      timed(step[3])
    end
  end
end
for i, step in ipairs(steps) do
  report(step[1], samples[i])
end
vim.fn.delete(work, 'rf')
vim.cmd('qa!')
