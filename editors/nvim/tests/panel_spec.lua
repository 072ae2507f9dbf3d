-- The panel against the real server: :SessionTree opens the newest session, the buffer shows the
-- server's lines, the header, keys move (wrapping) and page, filters and the search narrow it.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:gsub('^@', ''), ':p:h') .. '/support/helpers.lua')

H.run(function()
  local dir = H.workspace({
    ['c06.jsonl'] = H.fixture('c06-branch-basic/omp/session.jsonl'),
    ['csv-importer.omp.jsonl'] = H.example('csv-importer.omp.jsonl'),
  })
  -- The csv session is the newest: :SessionTree picks it.
  vim.uv.fs_utime(H.session('c06.jsonl'), os.time() - 100, os.time() - 100)
  H.setup(dir, { panel = { width = 70 } })

  local csv_uri = vim.uri_from_fname(H.session('csv-importer.omp.jsonl'))

  H.check(vim.fn.exists(':SessionTree') == 0, 'no commands before plugin/ is sourced (-u NONE)')
  vim.cmd('runtime plugin/sessiontree.lua')
  for _, name in ipairs({
    'SessionTree',
    'SessionOpen',
    'SessionBranch',
    'SessionLabel',
    'SessionSearch',
    'SessionFilter',
    'SessionSend',
    'SessionAppend',
    'SessionStop',
    'SessionInstallBridge',
    'SessionChat',
    'SessionName',
  }) do
    H.check(vim.fn.exists(':' .. name) == 2, ':' .. name .. ' is defined')
  end
  H.check(
    -- (the harness itself loads config and client to record the requests)
    package.loaded['sessiontree.panel'] == nil
      and package.loaded['sessiontree.actions'] == nil
      and package.loaded['sessiontree.chat'] == nil
      and package.loaded['sessiontree.render'] == nil,
    'plugin/ loads no module until a command runs',
    vim.tbl_filter(function(k)
      return k:match('^sessiontree')
    end, vim.tbl_keys(package.loaded))
  )

  local panel = require('sessiontree.panel')
  H.check(H.show(), ':SessionTree drew rows')
  local st = panel.state
  H.check(panel.same_uri(st.uri, csv_uri), ':SessionTree opened the most recently modified session', st.uri)
  H.check(panel.is_open() and vim.api.nvim_get_current_win() == st.win, 'the panel window is open and focused')
  H.check(
    vim.bo[st.buf].filetype == 'sessiontree' and vim.bo[st.buf].buftype == 'nofile',
    'scratch buffer with filetype sessiontree'
  )
  H.check(vim.api.nvim_win_get_width(st.win) == 70, 'panel width from setup (70)', vim.api.nvim_win_get_width(st.win))
  local layout = vim.fn.winlayout()
  H.check(layout[1] == 'row' and layout[2][1][2] == st.win, 'the panel is the left column', layout)

  local _, server = H.server_lines('default', '')
  H.check(
    vim.deep_equal(H.panel_lines(), server.lines),
    'the buffer lines equal the server lines',
    { buf = H.panel_lines(), server = server.lines }
  )
  H.check(#server.lines > 3, 'several rows (' .. #server.lines .. ')')
  H.check(H.cursor_id() == server.leaf, 'the cursor starts on the leaf', { cursor = H.cursor_id(), leaf = server.leaf })
  local header = panel.header()
  H.check(
    header:find('CSV importer quoted commas', 1, true) and header:find('filter: default', 1, true),
    'header names the session and the filter',
    header
  )
  H.check(vim.wo[st.win].winbar:find('CSV importer', 1, true) ~= nil, 'the header is the panel winbar')

  -- extmarks: the active path, the label, the leaf marker
  local groups = H.panel_groups()
  for _, g in ipairs({
    'SessionTreeLabel',
    'SessionTreeRoleUser',
    'SessionTreeRoleAssistant',
    'SessionTreeLeaf',
    'SessionTreeInactive',
    'SessionTreeCursor',
    'SessionTreeActivePath',
  }) do
    H.check(groups[g], 'rows highlighted with ' .. g)
  end
  H.check(
    vim.api.nvim_get_hl(0, { name = 'SessionTreeActivePath' }).link ~= nil,
    'SessionTreeActivePath is a default link users can relink'
  )

  -- keys: j/k move, wrap at both ends; Left/Right page
  local n = #st.rows
  vim.api.nvim_win_set_cursor(st.win, { n, 0 })
  H.feed('j')
  H.check(vim.api.nvim_win_get_cursor(st.win)[1] == 1, 'j on the last row wraps to the first')
  H.feed('k')
  H.check(vim.api.nvim_win_get_cursor(st.win)[1] == n, 'k on the first row wraps to the last')
  H.feed('<Up>')
  H.check(vim.api.nvim_win_get_cursor(st.win)[1] == n - 1, '<Up> moves up')
  H.feed('<Down>')
  H.check(vim.api.nvim_win_get_cursor(st.win)[1] == n, '<Down> moves down')
  H.feed('<Left>')
  H.check(
    vim.api.nvim_win_get_cursor(st.win)[1] == 1,
    '<Left> pages up (stops at the first row)',
    vim.api.nvim_win_get_cursor(st.win)
  )
  H.feed('<Right>')
  H.check(vim.api.nvim_win_get_cursor(st.win)[1] == n, '<Right> pages down (stops at the last row)')
  H.feed('k')
  local kept = H.cursor_id()
  H.check(
    vim.deep_equal(H.panel_lines(), (H.server_lines('default', ''))),
    'after moving, the lines equal the server lines for the cursor entry (marker moved)',
    { H.panel_lines(), (H.server_lines('default', '')) }
  )

  -- filters: <M-u> user only, <C-o> cycles on, <M-a> all, <M-d> back
  H.check(H.press('<M-u>'), '<M-u> redraws')
  local user_only = H.server_lines('userOnly', '')
  H.check(
    st.filter == 'userOnly' and vim.deep_equal(H.panel_lines(), user_only),
    '<M-u>: the user-only rows',
    { H.panel_lines(), user_only }
  )
  H.check(#user_only < n, 'user-only shows fewer rows')
  H.check(panel.header():find('filter: userOnly', 1, true), 'header shows the filter')
  H.press('<C-o>')
  H.check(st.filter == 'labeledOnly', '<C-o> cycles to the next filter', st.filter)
  H.redraw_after(function()
    require('sessiontree.search').cycle_filter(-1)
  end)
  H.check(st.filter == 'userOnly', 'cycling back (<C-S-o>) returns to the previous filter', st.filter)
  H.press('<M-a>')
  local all = H.server_lines('all', '')
  H.check(
    st.filter == 'all' and vim.deep_equal(H.panel_lines(), all) and #all >= n,
    '<M-a>: every row',
    { H.panel_lines(), all }
  )
  H.press('<M-t>')
  H.check(st.filter == 'noTools', '<M-t>: no tools')
  H.command('SessionFilter labeled')
  H.check(st.filter == 'labeledOnly', ':SessionFilter labeled')
  H.press('<M-d>')
  H.check(st.filter == 'default' and #H.panel_lines() == n, '<M-d>: back to default')
  H.check(
    H.cursor_id() == kept,
    'the cursor stayed on the same entry across the filters',
    { kept = kept, now = H.cursor_id() }
  )

  -- search: / then typing narrows live, Backspace edits, Esc clears, then closes
  H.feed('/')
  H.check(st.searching and panel.header():find('search: ', 1, true), '/ starts the search')
  for _, ch in ipairs({ 'q', 'u', 'o', 't', 'e', 'd' }) do
    H.press(ch)
  end
  H.check(st.search == 'quoted', 'typing goes into the search', st.search)
  local searched = H.server_lines('default', 'quoted')
  H.check(vim.deep_equal(H.panel_lines(), searched), 'the rows are the searched rows', { H.panel_lines(), searched })
  H.check(#searched < n and #searched > 0, 'the search narrows (' .. #searched .. ' of ' .. n .. ')')
  local _, match_marks = H.panel_groups()
  H.check(match_marks > 0, 'search matches highlighted (' .. match_marks .. ')')
  H.press('<BS>')
  H.check(st.search == 'quote', 'Backspace edits the search', st.search)
  H.press('<CR>')
  H.check(not st.searching and st.search == 'quote', '<CR> ends typing, the search stays')
  H.feed('j')
  H.check(st.search == 'quote', 'after typing, j moves again instead of typing')
  H.press('<Esc>')
  H.check(st.search == '' and panel.is_open() and #H.panel_lines() == n, 'Esc clears the search first')
  H.command('SessionSearch comma')
  H.check(st.search == 'comma' and #H.panel_lines() < n, ':SessionSearch comma narrows')
  H.press('<Esc>')
  H.feed('<Esc>')
  H.check(not panel.is_open(), 'the second Esc closes the panel')
  H.show()
  H.check(panel.is_open(), ':SessionTree reopens it')
  H.feed('q')
  H.check(not panel.is_open(), 'q closes the panel')

  -- :SessionOpen picks with vim.ui.select
  local offered
  vim.ui.select = function(items, opts, on_choice)
    offered = items
    for _, it in ipairs(items) do
      if it.path:match('c06%.jsonl$') then
        return on_choice(it)
      end
    end
  end
  H.check(H.command('SessionOpen'), ':SessionOpen drew the picked session')
  H.check(offered and #offered == 2, ':SessionOpen offered the 2 sessions', offered and #offered)
  H.check(panel.same_uri(st.uri, vim.uri_from_fname(H.session('c06.jsonl'))), 'the picked session is shown')
  local c06 = H.server_lines('default', '')
  H.check(vim.deep_equal(H.panel_lines(), c06), 'c06 rows equal the server lines', { H.panel_lines(), c06 })
end)
