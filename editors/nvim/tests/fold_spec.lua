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

--- The ids of the rows drawn.
---@return string[]
local function ids()
  return vim.tbl_map(function(row)
    return row.id
  end, require('sessiontree.panel').state.rows)
end

---@param id string
---@return table|nil
local function row_of(id)
  for _, row in ipairs(require('sessiontree.panel').state.rows) do
    if row.id == id then
      return row
    end
  end
end

--- The row whose text is `text`.
---@param text string
---@return table|nil
local function row_by_text(text)
  for _, row in ipairs(require('sessiontree.panel').state.rows) do
    if row.text == text then
      return row
    end
  end
end

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

--- Feeds `keys` and waits for the panel to draw again.
---@param keys string
---@return boolean
local function press(keys)
  return H.redraw_after(function()
    H.feed(keys)
  end, 10000)
end

--- The buffer line (1-based) of the cursor's row.
---@return integer
--- Whether any of `lines` holds a fold marker.
---@param lines string[]
---@return boolean
local function has_marker(lines)
  local text = table.concat(lines, '\n')
  return text:find('⊟', 1, true) ~= nil or text:find('⊞', 1, true) ~= nil
end

local function cursor_line()
  local st = require('sessiontree.panel').state
  return vim.api.nvim_win_get_cursor(st.win)[1]
end

H.run(function()
  local conf = H.conformance_dir()
  local dir = H.workspace({
    ['c06.jsonl'] = conf .. '/c06-branch-basic/omp/session.jsonl',
    ['c06-pi.jsonl'] = conf .. '/c06-branch-basic/pi/session.jsonl',
  })
  local bin = os.getenv('SESSIONTREE_BIN') or (H.repo .. '/target/debug/sessiontree')
  local big = dir .. '/sessions/big.jsonl'
  local out = vim.fn.system({ bin, 'generate', '--dialect', 'omp', '--entries', '3000', '--seed', '5', '--out', big })
  H.check(vim.v.shell_error == 0, 'a 3000-entry session is generated', out)
  local c06 = dir .. '/sessions/c06.jsonl'
  H.setup(dir)
  vim.cmd('runtime plugin/sessiontree.lua')
  local panel = require('sessiontree.panel')
  local search = require('sessiontree.search')
  local client = require('sessiontree.client')
  local st = panel.state
  local sent = {}
  local request = client.request
  client.request = function(method, params, handler)
    if method == 'sessionTree/rows' then
      table.insert(sent, vim.deepcopy(params))
    end
    return request(method, params, handler)
  end

  -- omp: c06 is u1 2ececf0f → a1 42864a3e → (Rome 6c055220 → a3 662d009f (leaf) | Paris c498f61c → a2 7af3bc6f).
  local U1, A1, ROME, A3, PARIS, A2 = '2ececf0f', '42864a3e', '6c055220', '662d009f', 'c498f61c', '7af3bc6f'
  H.check(
    H.redraw_after(function()
      vim.cmd('SessionTree ' .. c06)
    end, 10000),
    'omp: :SessionTree {file} drew rows'
  )
  local open_lines = H.panel_lines()
  H.check(vim.deep_equal(ids(), { U1, A1, ROME, A3, PARIS, A2 }), 'omp: the six rows', ids())
  H.check(H.cursor_id() == A3, 'omp: the cursor is on the leaf', H.cursor_id())
  H.check(
    row_of(ROME).foldable and row_of(PARIS).foldable and not row_of(A3).foldable,
    'omp: the branch starts can fold, the leaf cannot'
  )
  H.check(virt_texts(2):find('⊟', 1, true) ~= nil, 'omp: ⊟ drawn on the foldable branch row', virt_texts(2))
  H.check(
    vim.deep_equal(open_lines, (H.server_lines())) and not has_marker(open_lines),
    "omp: the lines are omp's, with no marker in the text",
    open_lines
  )

  -- h on the leaf (it cannot fold): up to the start of its branch segment.
  H.check(press('h'), 'omp: h redrew')
  H.check(H.cursor_id() == ROME, 'omp: h on the leaf moves up to the start of its branch', H.cursor_id())
  H.check(sent[#sent].segment == 'up' and sent[#sent].folded == nil, 'omp: asked with segment up', sent[#sent])
  -- h again: it folds.
  H.check(press('h'), 'omp: h redrew again')
  H.check(vim.deep_equal(ids(), { U1, A1, ROME, PARIS, A2 }), 'omp: h folds the branch: its rows are gone', ids())
  H.check(vim.deep_equal(sent[#sent].folded, { ROME }), 'omp: the rows were asked with folded', sent[#sent])
  H.check(H.cursor_id() == ROME and row_of(ROME).folded, 'omp: the cursor stays on the folded row')
  local folded_line = cursor_line() - 1
  H.check(virt_texts(folded_line):find('⊞', 1, true) ~= nil, 'omp: ⊞ drawn on the folded row', virt_texts(folded_line))
  H.check(
    virt_texts(folded_line):find('leaf (folded)', 1, true) ~= nil,
    'omp: the folded row holding the leaf is marked',
    virt_texts(folded_line)
  )
  H.check(not has_marker(H.panel_lines()), 'omp: still no marker in the text')

  -- Another process appends under the leaf (inside the folded branch): the fold holds, the
  -- cursor follows the leaf to the folded row.
  local entry = vim.json.encode({
    type = 'message',
    id = 'f00dfeed',
    parentId = A3,
    timestamp = '2025-01-01T00:01:00.000Z',
    message = {
      role = 'user',
      content = 'And a day in Ostia?',
      timestamp = 1735689660000,
    },
  })
  vim.fn.system({ 'sh', '-c', 'printf "%s\\n" "$1" >> "$2"', 'sh', entry, c06 })
  H.check(vim.v.shell_error == 0, 'omp: another process appended a line')
  H.check(
    H.wait(function()
      return st.leaf == 'f00dfeed' and panel.idle()
    end, 10000),
    'omp: the append arrived',
    st.leaf
  )
  H.check(
    vim.deep_equal(ids(), { U1, A1, ROME, PARIS, A2 }) and row_of(ROME).folded,
    'omp: the fold survives the append (the new entry is inside it)',
    ids()
  )
  H.check(H.cursor_id() == ROME, 'omp: the cursor followed the leaf to the folded row', H.cursor_id())
  H.check(
    H.redraw_after(function()
      panel.refresh()
    end),
    'omp: a refresh redrew'
  )
  H.check(row_of(ROME).folded and row_of(A3) == nil, 'omp: the fold survives a refresh', ids())

  -- l unfolds: the rows come back; l again moves down the segment (to the chain's end: the leaf).
  H.check(press('l'), 'omp: l redrew')
  H.check(
    vim.deep_equal(ids(), { U1, A1, ROME, A3, 'f00dfeed', PARIS, A2 }),
    'omp: l unfolds: the branch rows are back, the appended one too',
    ids()
  )
  H.check(sent[#sent].folded == nil, 'omp: asked with nothing folded', sent[#sent])
  H.check(press('l'), 'omp: l redrew again')
  H.check(H.cursor_id() == 'f00dfeed', 'omp: l on an unfolded row moves down to the end of the chain', H.cursor_id())

  -- zc on a row that cannot fold folds the branch it is in; zo unfolds; za toggles; zR.
  H.check(press('zc'), 'omp: zc redrew')
  H.wait(function()
    return row_of(ROME) and row_of(ROME).folded
  end)
  H.check(row_of(ROME) and row_of(ROME).folded and row_of(A3) == nil, 'omp: zc folds the branch the cursor is in', ids())
  H.check(press('zo'), 'omp: zo redrew')
  H.check(row_of(A3) ~= nil and not row_of(ROME).folded, 'omp: zo unfolds', ids())
  H.check(press('za'), 'omp: za redrew')
  H.check(row_of(ROME).folded, 'omp: za folds')
  H.check(press('za'), 'omp: za redrew again')
  H.check(not row_of(ROME).folded and row_of(A3) ~= nil, 'omp: za unfolds')
  -- Two folds, then zR; then a fold and a filter change.
  vim.api.nvim_win_set_cursor(st.win, { 1, 0 })
  H.check(press('l'), 'omp: l from the root redrew')
  H.check(H.cursor_id() == ROME, "omp: l from the root moves down to the branch point's first child", H.cursor_id())
  press('zc')
  for i, row in ipairs(st.rows) do
    if row.id == PARIS then
      vim.api.nvim_win_set_cursor(st.win, { i, 0 })
    end
  end
  press('zc')
  H.check(
    vim.deep_equal(ids(), { U1, A1, ROME, PARIS }) and vim.deep_equal(sent[#sent].folded, { ROME, PARIS }),
    'omp: both branches folded',
    { ids(), sent[#sent].folded }
  )
  H.check(press('zR'), 'omp: zR redrew')
  H.check(#st.rows == 7 and sent[#sent].folded == nil, 'omp: zR unfolds everything', ids())
  for i, row in ipairs(st.rows) do
    if row.id == ROME then
      vim.api.nvim_win_set_cursor(st.win, { i, 0 })
    end
  end
  press('zc')
  H.check(row_of(ROME).folded, 'omp: folded again')
  H.redraw_after(function()
    search.set_filter('all')
  end)
  H.check(not row_of(ROME).folded and row_of(A3) ~= nil, 'omp: a filter change unfolds, as pi does', ids())
  H.redraw_after(function()
    search.set_filter('default')
  end)

  -- pi: its own markers, in the lines.
  H.check(
    H.redraw_after(function()
      vim.cmd('SessionTree ' .. dir .. '/sessions/c06-pi.jsonl')
    end, 10000),
    'pi: :SessionTree {file} drew rows'
  )
  local rome = row_by_text('user: Rome')
  H.check(rome and rome.foldable and H.panel_lines()[3]:find('├⊟', 1, true), 'pi: ⊟ in the line', H.panel_lines())
  press('h')
  H.check(rome and H.cursor_id() == rome.id, 'pi: h on the leaf moves up to the start of its branch', H.cursor_id())
  press('h')
  H.check(
    #st.rows == 5 and row_by_text('assistant: Rome is historic.') == nil and row_by_text('user: Rome').folded,
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
  press('l')
  H.check(#st.rows == 6 and H.panel_lines()[3]:find('├⊟', 1, true), 'pi: l unfolds', H.panel_lines())

  -- Windows: a 3000-entry session fetched around the cursor keeps the fold in every window.
  require('sessiontree.config').options.panel.max_rows = 100
  H.check(
    H.redraw_after(function()
      vim.cmd('SessionTree ' .. big)
    end, 30000),
    'big: :SessionTree {file} drew rows'
  )
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
  press('h')
  H.check(row_of(folded_id) and row_of(folded_id).folded, 'big: folded', folded_id)
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
  for _ = 1, 80 do
    H.feed('<Right>')
    H.wait(panel.idle)
    if st.window_start ~= last_start then
      last_start = st.window_start
      windows = windows + 1
      local slice = vim.list_slice(all_ids, st.window_start + 1, st.window_start + #st.rows)
      if not vim.deep_equal(ids(), slice) or not vim.deep_equal(sent[#sent].folded, { folded_id }) then
        table.insert(wrong, st.window_start)
      end
    end
  end
  for _ = 1, 80 do
    H.feed('<Left>')
    H.wait(panel.idle)
    if st.window_start ~= last_start then
      last_start = st.window_start
      windows = windows + 1
      local slice = vim.list_slice(all_ids, st.window_start + 1, st.window_start + #st.rows)
      if not vim.deep_equal(ids(), slice) or not vim.deep_equal(sent[#sent].folded, { folded_id }) then
        table.insert(wrong, st.window_start)
      end
    end
  end
  H.check(windows >= 4, 'big: paging brought new windows', windows)
  H.check(#wrong == 0, 'big: every window is the folded view, asked with the fold', wrong)
end)
