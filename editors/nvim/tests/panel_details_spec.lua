-- What a Neovim user notices in the panel: the winbar keeps the session name readable (cut at its
-- end, never lost from its start) while a search is shown; "1 problem" (not "1 problems"); `L`
-- confirms the label it set or cleared; the previous-filter key can be typed in any terminal.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:gsub('^@', ''), ':p:h') .. '/support/helpers.lua')

H.run(function()
  H.start({ ['csv-importer.omp.jsonl'] = H.example('csv-importer.omp.jsonl') }) -- the default panel width (60)
  local messages = H.messages(true)
  local panel = require('sessiontree.panel')
  local render = require('sessiontree.render')
  local search = require('sessiontree.search')
  local st = panel.state
  H.check(H.show(H.session('csv-importer.omp.jsonl')), ':SessionTree drew rows')

  --- The winbar as Neovim draws it in the panel's width.
  local function bar()
    local width = vim.api.nvim_win_get_width(st.win)
    return vim.api.nvim_eval_statusline(vim.wo[st.win].winbar, { winid = st.win, use_winbar = true, maxwidth = width }).str
  end
  H.check(vim.api.nvim_win_get_width(st.win) == 60, 'the panel is 60 columns wide')
  H.check(vim.startswith(bar(), ' CSV importer quoted commas · filter: default'), 'the winbar: name, filter', bar())

  search.start()
  H.redraw_after(function()
    search.set('quote')
  end)
  local shown = bar()
  H.check(
    vim.startswith(shown, ' CSV importer') and shown:find('search: quote▏', 1, true) ~= nil,
    'with a search the winbar still starts with the session name, and shows the whole search',
    shown
  )
  H.redraw_after(function()
    search.set('quoted commas in the parser')
  end)
  shown = bar()
  H.check(
    shown:find('search: quoted commas in the parser▏', 1, true) ~= nil
      and shown:match('^ CSV importer[^·]*…') ~= nil
      and vim.fn.strdisplaywidth(shown) <= 60,
    'a long search: the name is cut at its end (…), the search whole, within the width',
    shown
  )
  search.stop()
  H.redraw_after(function()
    search.set('')
  end)

  -- Problems: one is "1 problem".
  local state = { name = 'x', filter = 'default', search = '', searching = false, problems = 1 }
  H.check(render.header_text(state) == 'x · filter: default · 1 problem', '"1 problem"', render.header_text(state))
  H.check(
    render.winbar(state):find('1 problem%', 1, true) ~= nil,
    'the winbar says "1 problem" too',
    render.winbar(state)
  )
  state.problems = 3
  H.check(render.header_text(state):find('3 problems', 1, true) ~= nil, '"3 problems"')

  -- L confirms what it did.
  vim.ui.input = function(_, on_confirm)
    on_confirm('spec-label')
  end
  messages.clear()
  H.press('L')
  H.check(
    H.wait(function()
      return messages.said('Label [spec-label] set on "')
    end),
    'L: "Label [spec-label] set on …"',
    messages.texts()
  )
  vim.ui.input = function(_, on_confirm)
    on_confirm('')
  end
  messages.clear()
  H.press('L')
  H.check(
    H.wait(function()
      return messages.said('Label cleared on "')
    end),
    'L with an empty label: "Label cleared on …"',
    messages.texts()
  )

  -- The previous filter on a key any terminal can send.
  H.press('<M-o>')
  H.check(st.filter == 'all', '<M-o> goes back from default to all', st.filter)
  H.press('<M-d>')
  H.check(st.filter == 'default', '<M-d> back to default')
end)
