-- The panel fetches rows in windows around the cursor (as VS Code does), so a filter change or a
-- search on a huge session answers with a window, not with every row: the rows drawn are a window
-- of the total the header counts; moving or paging towards an edge brings the next window, with
-- the cursor's row kept in its place on the screen; paging reaches the last row; `max_rows = 0`
-- asks for every row as before.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:gsub('^@', ''), ':p:h') .. '/support/helpers.lua')

H.run(function()
  H.start({}, { panel = { max_rows = 100 } })
  local file = H.session('big.jsonl')
  local generated, out = H.generate(file, { '--dialect', 'omp', '--entries', '3000', '--seed', '3' })
  H.check(generated, 'a 3000-entry session is generated', out)
  vim.o.lines = 40
  local panel = require('sessiontree.panel')
  local search = require('sessiontree.search')
  local st = panel.state
  --- The height the panel asked its last rows for.
  local function height()
    return H.last_request('sessionTree/rows').height
  end

  H.check(H.show(file, 30000), ':SessionTree drew rows')
  H.check(height() == 200, 'rows are asked for a window (height 2 × max_rows)', height())
  H.check(st.total ~= nil and st.total > 1000, 'the session has over a thousand visible rows', st.total)
  H.check(#st.rows <= 100 and #st.rows >= 50, 'the panel holds a window of about max_rows rows', #st.rows)
  H.check(panel.header():find(st.total .. ' rows', 1, true) ~= nil, 'the header counts every row', panel.header())
  local at = vim.api.nvim_win_get_cursor(st.win)[1]
  H.check(st.rows[at].isLeaf, 'the cursor is on the leaf')
  H.check(
    st.window_start > 0 and at > 10 and at < #st.rows - 10,
    'the window is around the leaf, rows above it too',
    { st.window_start, at }
  )

  -- A filter change answers with a window of the filtered rows.
  H.redraw_after(function()
    search.set_filter('all')
  end)
  H.check(#st.rows <= 100 and st.total > #st.rows, 'filter all: a window of the rows', { #st.rows, st.total })
  H.redraw_after(function()
    search.set_filter('default')
  end)

  -- Up towards the top edge: the next window comes, the cursor's row stays on its screen line.
  local start = st.window_start
  local moved_to = nil
  local screen_line = nil
  for _ = 1, 200 do
    H.feed('k')
    local lnum = vim.api.nvim_win_get_cursor(st.win)[1]
    moved_to = st.rows[lnum].id
    screen_line = vim.fn.winline()
    if not panel.idle() then
      break
    end
  end
  H.wait(panel.idle)
  H.check(st.window_start < start, 'k near the top edge brings the window above', { start, st.window_start })
  local lnum = vim.api.nvim_win_get_cursor(st.win)[1]
  H.check(
    st.rows[lnum] and st.rows[lnum].id == moved_to,
    'the cursor stays on the row it was on',
    { moved_to, st.rows[lnum] }
  )
  H.check(vim.fn.winline() == screen_line, 'on the same screen line', { screen_line, vim.fn.winline() })
  H.check(st.lines[lnum]:find('›', 1, true) ~= nil, "the server's cursor marker is on that row", st.lines[lnum])

  -- Paging up reaches the first row; then paging down reaches the last (the leaf).
  for _ = 1, 400 do
    H.feed('<Left>')
    H.wait(panel.idle)
    if st.window_start == 0 and vim.api.nvim_win_get_cursor(st.win)[1] == 1 then
      break
    end
  end
  H.check(
    st.window_start == 0 and vim.api.nvim_win_get_cursor(st.win)[1] == 1,
    'paging up reaches the first row',
    { st.window_start, vim.api.nvim_win_get_cursor(st.win)[1] }
  )
  local first = st.rows[1].id
  H.feed('k')
  H.check(
    st.rows[vim.api.nvim_win_get_cursor(st.win)[1]].id == first,
    'k on the first row of a window stays (no wrap into a window)'
  )
  for _ = 1, 400 do
    H.feed('<Right>')
    H.wait(panel.idle)
    local at = vim.api.nvim_win_get_cursor(st.win)[1]
    if st.window_start + #st.rows == st.total and at == #st.rows then
      break
    end
  end
  H.check(
    st.window_start + #st.rows == st.total and vim.api.nvim_win_get_cursor(st.win)[1] == #st.rows,
    'paging down reaches the last row',
    { st.window_start, #st.rows, st.total }
  )

  -- max_rows = 0: every row, as before.
  require('sessiontree.config').options.panel.max_rows = 0
  H.redraw_after(function()
    search.set_filter('all')
  end, 30000)
  H.check(height() == 0 and #st.rows == st.total, 'max_rows = 0 asks for every row', { height(), #st.rows, st.total })
end)
