-- Folding in the panel, as pi's /tree folds, against the real server and copies of real sessions:
-- on an omp session (omp has no folding; the panel draws the markers) and a pi session (pi's own
-- markers in the lines). `h` moves up to the start of the branch segment, then folds it: the
-- branch's rows leave the panel and the cursor stays on the folded row; the fold survives an
-- append by another process (the leaf inside the folded branch: the cursor follows it to the
-- folded row) and a refresh; `l` unfolds and brings the rows back, then moves down a segment;
-- `zc` folds the branch the cursor is in, `zo` unfolds, `za` toggles, `zR` unfolds all; a filter
-- change unfolds, as pi does. On a 3000-entry session fetched in windows, every window asked for
-- carries the fold and none shows a hidden row.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:gsub('^@', ''), ':p:h') .. '/support/helpers.lua')

--- The virtual texts drawn on buffer line `lnum` (0-based).
---@param lnum integer
---@return string
local function virt_texts(lnum)
  local st = require('sessiontree.panel').state
  local out = {}
  for _, m in ipairs(vim.api.nvim_buf_get_extmarks(st.buf, -1, { lnum, 0 }, { lnum, -1 }, { details = true })) do
    for _, chunk in ipairs(m[4].virt_text or {}) do
      table.insert(out, chunk[1])
    end
  end
  return table.concat(out, '|')
end

--- Whether any of `lines` holds a fold marker.
---@param lines string[]
---@return boolean
local function has_marker(lines)
  local text = table.concat(lines, '\n')
  return text:find('⊟', 1, true) ~= nil or text:find('⊞', 1, true) ~= nil
end

H.run(function()
  H.start({
    ['c06.jsonl'] = H.fixture('c06-branch-basic/omp/session.jsonl'),
    ['c06-pi.jsonl'] = H.fixture('c06-branch-basic/pi/session.jsonl'),
  })
  local big = H.session('big.jsonl')
  local generated, out = H.generate(big, { '--dialect', 'omp', '--entries', '3000', '--seed', '5' })
  H.check(generated, 'a 3000-entry session is generated', out)
  local c06 = H.session('c06.jsonl')
  local panel = require('sessiontree.panel')
  local search = require('sessiontree.search')
  local st = panel.state
  --- The last rows the panel asked for.
  local function asked()
    return H.last_request('sessionTree/rows')
  end

  -- omp: c06 is u1 2ececf0f → a1 42864a3e → (Rome 6c055220 → a3 662d009f (leaf) | Paris c498f61c → a2 7af3bc6f).
  local U1, A1, ROME, A3, PARIS, A2 = '2ececf0f', '42864a3e', '6c055220', '662d009f', 'c498f61c', '7af3bc6f'
  H.check(H.show(c06), 'omp: :SessionTree {file} drew rows')
  local open_lines = H.panel_lines()
  H.check(vim.deep_equal(H.row_ids(), { U1, A1, ROME, A3, PARIS, A2 }), 'omp: the six rows', H.row_ids())
  H.check(H.cursor_id() == A3, 'omp: the cursor is on the leaf', H.cursor_id())
  H.check(
    H.row(ROME).foldable and H.row(PARIS).foldable and not H.row(A3).foldable,
    'omp: the branch starts can fold, the leaf cannot'
  )
  H.check(virt_texts(2):find('⊟', 1, true) ~= nil, 'omp: ⊟ drawn on the foldable branch row', virt_texts(2))
  H.check(
    vim.deep_equal(open_lines, (H.server_lines())) and not has_marker(open_lines),
    "omp: the lines are omp's, with no marker in the text",
    open_lines
  )

  -- h on the leaf (it cannot fold): up to the start of its branch segment.
  H.check(H.press('h'), 'omp: h redrew')
  H.check(H.cursor_id() == ROME, 'omp: h on the leaf moves up to the start of its branch', H.cursor_id())
  H.check(asked().segment == 'up' and asked().folded == nil, 'omp: asked with segment up', asked())
  -- h again: it folds.
  H.check(H.press('h'), 'omp: h redrew again')
  H.check(
    vim.deep_equal(H.row_ids(), { U1, A1, ROME, PARIS, A2 }),
    'omp: h folds the branch: its rows are gone',
    H.row_ids()
  )
  H.check(vim.deep_equal(asked().folded, { ROME }), 'omp: the rows were asked with folded', asked())
  H.check(H.cursor_id() == ROME and H.row(ROME).folded, 'omp: the cursor stays on the folded row')
  local folded_line = H.cursor_line() - 1
  H.check(
    virt_texts(folded_line):find('⊞', 1, true) ~= nil,
    'omp: ⊞ drawn on the folded row',
    virt_texts(folded_line)
  )
  H.check(
    virt_texts(folded_line):find('leaf (folded)', 1, true) ~= nil,
    'omp: the folded row holding the leaf is marked',
    virt_texts(folded_line)
  )
  H.check(not has_marker(H.panel_lines()), 'omp: still no marker in the text')

  -- Another process appends under the leaf (inside the folded branch): the fold holds, the
  -- cursor follows the leaf to the folded row.
  H.check(
    H.append_entry(c06, {
      type = 'message',
      id = 'f00dfeed',
      parentId = A3,
      timestamp = '2025-01-01T00:01:00.000Z',
      message = { role = 'user', content = 'And a day in Ostia?', timestamp = 1735689660000 },
    }),
    'omp: another process appended a line'
  )
  H.check(
    H.wait(function()
      return st.leaf == 'f00dfeed' and panel.idle()
    end, 10000),
    'omp: the append arrived',
    st.leaf
  )
  H.check(
    vim.deep_equal(H.row_ids(), { U1, A1, ROME, PARIS, A2 }) and H.row(ROME).folded,
    'omp: the fold survives the append (the new entry is inside it)',
    H.row_ids()
  )
  H.check(H.cursor_id() == ROME, 'omp: the cursor followed the leaf to the folded row', H.cursor_id())
  H.check(H.redraw_after(panel.refresh), 'omp: a refresh redrew')
  H.check(H.row(ROME).folded and H.row(A3) == nil, 'omp: the fold survives a refresh', H.row_ids())

  -- l unfolds: the rows come back; l again moves down the segment (to the chain's end: the leaf).
  H.check(H.press('l'), 'omp: l redrew')
  H.check(
    vim.deep_equal(H.row_ids(), { U1, A1, ROME, A3, 'f00dfeed', PARIS, A2 }),
    'omp: l unfolds: the branch rows are back, the appended one too',
    H.row_ids()
  )
  H.check(asked().folded == nil, 'omp: asked with nothing folded', asked())
  H.check(H.press('l'), 'omp: l redrew again')
  H.check(H.cursor_id() == 'f00dfeed', 'omp: l on an unfolded row moves down to the end of the chain', H.cursor_id())

  -- zc on a row that cannot fold folds the branch it is in; zo unfolds; za toggles; zR.
  H.check(H.press('zc'), 'omp: zc redrew')
  H.wait(function()
    return H.row(ROME) and H.row(ROME).folded
  end)
  H.check(
    H.row(ROME) and H.row(ROME).folded and H.row(A3) == nil,
    'omp: zc folds the branch the cursor is in',
    H.row_ids()
  )
  H.check(H.press('zo'), 'omp: zo redrew')
  H.check(H.row(A3) ~= nil and not H.row(ROME).folded, 'omp: zo unfolds', H.row_ids())
  H.check(H.press('za'), 'omp: za redrew')
  H.check(H.row(ROME).folded, 'omp: za folds')
  H.check(H.press('za'), 'omp: za redrew again')
  H.check(not H.row(ROME).folded and H.row(A3) ~= nil, 'omp: za unfolds')
  -- Two folds, then zR; then a fold and a filter change.
  vim.api.nvim_win_set_cursor(st.win, { 1, 0 })
  H.check(H.press('l'), 'omp: l from the root redrew')
  H.check(H.cursor_id() == ROME, "omp: l from the root moves down to the branch point's first child", H.cursor_id())
  H.press('zc')
  H.goto_row(PARIS)
  H.press('zc')
  H.check(
    vim.deep_equal(H.row_ids(), { U1, A1, ROME, PARIS }) and vim.deep_equal(asked().folded, { ROME, PARIS }),
    'omp: both branches folded',
    { H.row_ids(), asked().folded }
  )
  H.check(H.press('zR'), 'omp: zR redrew')
  H.check(#st.rows == 7 and asked().folded == nil, 'omp: zR unfolds everything', H.row_ids())
  H.goto_row(ROME)
  H.press('zc')
  H.check(H.row(ROME).folded, 'omp: folded again')
  H.redraw_after(function()
    search.set_filter('all')
  end)
  H.check(not H.row(ROME).folded and H.row(A3) ~= nil, 'omp: a filter change unfolds, as pi does', H.row_ids())
  H.redraw_after(function()
    search.set_filter('default')
  end)

  -- pi: its own markers, in the lines.
  H.check(H.show(H.session('c06-pi.jsonl')), 'pi: :SessionTree {file} drew rows')
  local rome = H.row_with_text('user: Rome')
  H.check(rome and rome.foldable and H.panel_lines()[3]:find('├⊟', 1, true), 'pi: ⊟ in the line', H.panel_lines())
  H.press('h')
  H.check(rome and H.cursor_id() == rome.id, 'pi: h on the leaf moves up to the start of its branch', H.cursor_id())
  H.press('h')
  H.check(
    #st.rows == 5 and H.row_with_text('assistant: Rome is historic.') == nil and H.row_with_text('user: Rome').folded,
    'pi: h folds the branch: its rows are gone',
    H.panel_lines()
  )
  H.check(
    vim.deep_equal(H.panel_lines(), {
      '  • user: Plan a trip',
      '  • assistant: Where to?',
      '› ├⊞ • user: Rome',
      '  └⊟ user: Paris',
      '        assistant: Paris is lovely.',
      '  (3/5)',
    }),
    "pi: the lines are pi's folded list",
    H.panel_lines()
  )
  H.press('l')
  H.check(#st.rows == 6 and H.panel_lines()[3]:find('├⊟', 1, true), 'pi: l unfolds', H.panel_lines())

  -- Windows: a 3000-entry session fetched around the cursor keeps the fold in every window.
  require('sessiontree.config').options.panel.max_rows = 100
  H.check(H.show(big, 30000), 'big: :SessionTree {file} drew rows')
  -- A foldable row in the window other than the root (one with a connector).
  local best = nil
  for i, row in ipairs(st.rows) do
    if row.foldable and (row.prefix or '') ~= '' and i < #st.rows then
      best = best or i
    end
  end
  H.check(best ~= nil, 'big: a foldable branch row in the window')
  local total_before = st.total
  vim.api.nvim_win_set_cursor(st.win, { best, 0 })
  local folded_id = st.rows[best].id
  H.press('h')
  H.check(H.row(folded_id) and H.row(folded_id).folded, 'big: folded', folded_id)
  H.check(st.total < total_before, 'big: fewer rows in all', { total_before, st.total })
  local every = H.ask('sessionTree/rows', {
    uri = st.uri,
    filter = 'default',
    height = 0,
    width = panel.row_width(),
    folded = { folded_id },
  })
  local all_ids = vim.tbl_map(function(row)
    return row.id
  end, every.rows)
  H.check(#all_ids == st.total, 'big: the server counts the same rows', { #all_ids, st.total })
  local windows, wrong = 0, {}
  local last_start = st.window_start
  for _, key in ipairs({ '<Right>', '<Left>' }) do
    for _ = 1, 80 do
      H.feed(key)
      H.wait(panel.idle)
      if st.window_start ~= last_start then
        last_start = st.window_start
        windows = windows + 1
        local slice = vim.list_slice(all_ids, st.window_start + 1, st.window_start + #st.rows)
        if not vim.deep_equal(H.row_ids(), slice) or not vim.deep_equal(asked().folded, { folded_id }) then
          table.insert(wrong, st.window_start)
        end
      end
    end
  end
  H.check(windows >= 4, 'big: paging brought new windows', windows)
  H.check(#wrong == 0, 'big: every window is the folded view, asked with the fold', wrong)
end)
