-- :SessionTree with no file finds the working directory's sessions in the agents' own folders
-- (here pi's layout, ~/.pi/agent/sessions/--<cwd>--/), newest first, with no extra roots.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:gsub('^@', ''), ':p:h') .. '/support/helpers.lua')

H.run(function()
  local dir = H.workspace({})
  local cwd = vim.fn.resolve(dir)
  local folder = dir .. '/pi-agent/sessions/--' .. cwd:gsub('^/', ''):gsub('[/\\:]', '-') .. '--'
  vim.fn.mkdir(folder, 'p')
  H.write(folder .. '/older.jsonl', H.read(H.fixture('c05-labels/omp/session.jsonl')))
  H.write(folder .. '/newer.jsonl', H.read(H.fixture('c06-branch-basic/omp/session.jsonl')))
  vim.uv.fs_utime(folder .. '/older.jsonl', os.time() - 60, os.time() - 60)
  H.setup(dir, { extra_roots = {} })
  vim.fn.chdir(cwd)
  vim.cmd('runtime plugin/sessiontree.lua')
  local panel = require('sessiontree.panel')
  H.check(H.show(), ":SessionTree found a session in pi's folder for the working directory")
  H.check(
    panel.same_uri(panel.state.uri, vim.uri_from_fname(folder .. '/newer.jsonl')),
    'it is the most recently modified one',
    panel.state.uri
  )
  local offered
  vim.ui.select = function(items, _, on_choice)
    offered = items
    on_choice(nil)
  end
  vim.cmd('SessionOpen')
  H.check(
    H.wait(function()
      return offered ~= nil
    end),
    ':SessionOpen offers them'
  )
  H.check(
    offered and #offered == 2 and offered[1].path:match('newer%.jsonl$') and offered[1].agent == 'pi',
    "both, newest first, found in pi's folder",
    offered
  )
  H.check(
    require('sessiontree').describe_session(offered[1]):find('Plan a trip', 1, true) ~= nil,
    'the picker names a session by its first message',
    require('sessiontree').describe_session(offered[1])
  )
end)
