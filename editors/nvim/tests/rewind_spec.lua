-- Rewind in Neovim, against the real server and a real git repository: the server records points
-- for the session it follows (an agent's lines appended by another process), rows with a point get
-- a mark, :SessionRewindCompare fills the quickfix list and opens a :diffthis split per file with
-- the point's content, :SessionRewindRestore asks and restores, :SessionRewindUndo brings the
-- user's own edit back.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:gsub('^@', ''), ':p:h') .. '/support/helpers.lua')

local SID = '0194eeee-0000-7000-8000-000000000005'

local function git(dir, ...)
  local out = vim.fn.system(vim.list_extend({ 'git', '-C', dir, '-c', 'user.name=t', '-c', 'user.email=t@t' }, { ... }))
  assert(vim.v.shell_error == 0, 'git ' .. table.concat({ ... }, ' ') .. ': ' .. out)
end

local function append(path, text)
  local f = assert(io.open(path, 'ab'))
  f:write(text)
  f:close()
end

local function user(id, parent, text)
  return string.format(
    '{"type":"message","id":"%s","parentId":%s,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"%s","timestamp":1735689601000}}\n',
    id,
    parent and ('"' .. parent .. '"') or 'null',
    text
  )
end

local function assistant(id, parent)
  return string.format(
    '{"type":"message","id":"%s","parentId":"%s","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"done"}],"api":"x","provider":"x","model":"x","stopReason":"stop","timestamp":1735689602000}}\n',
    id,
    parent
  )
end

H.run(function()
  local dir = H.workspace({})
  local repo = dir .. '/repo'
  vim.fn.mkdir(repo, 'p')
  git(repo, 'init', '-q', '-b', 'main')
  H.write(repo .. '/src/app.lua', 'return 1\n')
  git(repo, 'add', '-A')
  git(repo, 'commit', '-qm', 'init')
  local file = dir .. '/sessions/live.jsonl'
  H.write(
    file,
    '{"type":"session","version":3,"id":"'
      .. SID
      .. '","timestamp":"2025-01-01T00:00:00.000Z","cwd":"'
      .. repo
      .. '"}\n'
      .. user('u1000001', nil, 'hello')
      .. assistant('a1000001', 'u1000001')
  )
  H.setup(dir)
  vim.cmd('runtime plugin/sessiontree.lua')
  local panel = require('sessiontree.panel')
  local rewind = require('sessiontree.rewind')
  local protocol = require('sessiontree.protocol')
  H.check(H.show(file), ':SessionTree drew the session')

  -- The agent (another process) takes a turn: the prompt, then its files, then the turn's end.
  append(file, user('u2000002', 'a1000001', 'change the app'))
  local function point_of(id)
    local found
    H.wait(function()
      local result = H.ask(protocol.REWIND_POINTS, { uri = panel.state.uri })
      for _, p in ipairs(result.points) do
        if p.entryId == id then
          found = p
        end
      end
      return found ~= nil
    end, 15000)
    return found
  end
  local before = point_of('u2000002')
  H.check(
    before and before.moment == 'before' and before.by == 'server',
    'the prompt got a "before" point from the server',
    before
  )
  H.write(repo .. '/src/app.lua', 'return 2 -- the agent\n')
  H.write(repo .. '/src/new.lua', 'return "new"\n')
  append(file, assistant('a2000002', 'u2000002'))
  local after = point_of('a2000002')
  H.check(after and after.moment == 'after', 'the turn end got an "after" point', after)

  -- The rows with a point carry a mark.
  H.check(
    H.wait(function()
      local marks = vim.api.nvim_buf_get_extmarks(panel.state.buf, rewind.ns, 0, -1, { details = true })
      return #marks >= 2
    end, 10000),
    'rows with a point are marked'
  )

  -- Compare with the prompt's point: quickfix + a diff split per file.
  H.check(H.goto_row('u2000002'), 'the cursor is on the prompt')
  local tabs = vim.fn.tabpagenr('$')
  local _, compared = H.answer(function(done)
    rewind.compare(nil, done)
  end, 15000)
  H.check(compared ~= nil, ':SessionRewindCompare answered')
  local qf = vim.fn.getqflist()
  local names = {}
  for _, item in ipairs(qf) do
    table.insert(names, vim.fn.fnamemodify(vim.fn.bufname(item.bufnr), ':t') .. ' ' .. item.text)
  end
  table.sort(names)
  H.check(
    vim.deep_equal(names, { 'app.lua modified since the point', 'new.lua added since the point' }),
    'the quickfix list has the changed files',
    names
  )
  H.check(vim.fn.tabpagenr('$') == tabs + 2, 'a diff tab per file', { before = tabs, now = vim.fn.tabpagenr('$') })
  -- The app.lua tab: the point's content on the left, in diff mode, read only.
  local found_diff = false
  for t = tabs + 1, vim.fn.tabpagenr('$') do
    for _, win in ipairs(vim.api.nvim_tabpage_list_wins(vim.api.nvim_list_tabpages()[t])) do
      local buf = vim.api.nvim_win_get_buf(win)
      local name = vim.api.nvim_buf_get_name(buf)
      if name:find('sessiontree://point/u2000002/src/app.lua', 1, true) then
        found_diff = vim.wo[win].diff
          and not vim.bo[buf].modifiable
          and vim.deep_equal(vim.api.nvim_buf_get_lines(buf, 0, -1, false), { 'return 1' })
      end
    end
  end
  H.check(found_diff, "the point's app.lua is a read-only :diffthis buffer with the point's content")
  vim.cmd('tabfirst | tabonly')

  -- Restore (answering the question), then undo brings the user's own edit back.
  H.write(repo .. '/src/app.lua', 'return 3 -- my own edit\n')
  local asked
  vim.ui.select = function(items, opts, on_choice)
    asked = opts.prompt
    on_choice(items[1], 1)
  end
  H.check(H.goto_row('u2000002'), 'the cursor is on the prompt again')
  local _, restored = H.answer(function(done)
    rewind.restore(nil, done)
  end, 15000)
  H.check(restored ~= nil, ':SessionRewindRestore restored')
  H.check(
    asked and asked:find('1 changed, 0 added, 1 deleted', 1, true) ~= nil,
    'it asked first, with the counts',
    asked
  )
  H.check(H.read(repo .. '/src/app.lua') == 'return 1\n', 'app.lua is as the point has it')
  H.check(H.read(repo .. '/src/new.lua') == nil, 'the file the agent made is gone')
  local _, undone = H.answer(function(done)
    rewind.undo(done)
  end, 15000)
  H.check(undone ~= nil, ':SessionRewindUndo answered')
  H.check(H.read(repo .. '/src/app.lua') == 'return 3 -- my own edit\n', "undo brings back the user's own edit")
  H.check(H.read(repo .. '/src/new.lua') == 'return "new"\n', "and the agent's file")
end)
