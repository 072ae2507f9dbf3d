-- What the user sees when something is wrong: a damaged file (problems reported, rows still drawn),
-- a file that is not a session, no server binary.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:gsub('^@', ''), ':p:h') .. '/support/helpers.lua')

H.run(function()
  local dir = H.start({
    ['m01.jsonl'] = H.fixture('M01-malformed-lines/input.jsonl'),
    ['m03.jsonl'] = H.fixture('M03-invalid-header/input.jsonl'),
  })
  local messages = H.messages(true)
  local said = messages.said
  local panel = require('sessiontree.panel')
  local st = panel.state

  local m01 = H.session('m01.jsonl')
  local before = vim.fn.readfile(m01, 'b')
  H.check(H.show(m01), 'a file with malformed lines still draws its rows')
  H.check(#st.rows > 0 and vim.deep_equal(H.panel_lines(), (H.server_lines())), 'its rows equal the server lines')
  H.check(
    st.problems and st.problems >= 2 and panel.header():find('problems', 1, true),
    'the header counts the problems',
    panel.header()
  )
  H.check(said('problems in m01.jsonl'), 'a warning names the file and a problem', messages.texts())
  H.check(vim.deep_equal(vim.fn.readfile(m01, 'b'), before), 'the damaged file is left as it is')

  messages.clear()
  vim.cmd('SessionTree ' .. H.session('m03.jsonl'))
  H.check(
    H.wait(function()
      return said('cannot open')
    end),
    'a file that is not a session: "cannot open" with the reason',
    messages.texts()
  )
  H.check(said('invalidHeader'), 'the error kind is named (invalidHeader)', messages.texts())
  local marks = vim.api.nvim_buf_get_extmarks(st.buf, -1, 0, -1, { details = true })
  local shown = false
  for _, m in ipairs(marks) do
    for _, chunk in ipairs(m[4].virt_text or {}) do
      shown = shown or chunk[1]:find('cannot open', 1, true) ~= nil
    end
  end
  H.check(shown, 'the panel says it cannot open the file')
  H.check(not panel.header():find('problems', 1, true), "the previous file's problem count is gone", panel.header())

  -- No server binary.
  H.stop_server()
  require('sessiontree.config').options.cmd = { dir .. '/no-such-sessiontree', 'lsp' }
  messages.clear()
  vim.cmd('SessionOpen')
  H.check(
    H.wait(function()
      return #messages.list > 0
    end),
    ':SessionOpen without a server gives a message',
    messages.texts()
  )
  H.check(
    said('could not start the server') or said('not executable') or said('failed'),
    'the message says the server could not start',
    messages.texts()
  )
end)
