-- vim.lsp.enable('sessiontree') with the lsp/ config: the server attaches to a session file, gives
-- it the standard features, and the panel reuses that client. Also a pi-dialect session.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:gsub('^@', ''), ':p:h') .. '/support/helpers.lua')

H.run(function()
  -- Keys remapped through setup(): `n` moves down instead of j/<Down>, <M-o> goes back a filter, q unmapped.
  H.start(
    { ['csv.pi.jsonl'] = H.example('csv-importer.pi.jsonl') },
    { keys = { down = 'n', filter_prev = '<M-o>', close = false } }
  )
  local file = H.session('csv.pi.jsonl')

  vim.lsp.config('sessiontree', { cmd = { H.bin(), 'lsp' } })
  vim.lsp.enable('sessiontree')
  H.edit(file)
  local c
  H.check(
    H.wait(function()
      c = vim.lsp.get_clients({ name = 'sessiontree', bufnr = 0 })[1]
      return c and c.initialized
    end, 10000),
    'vim.lsp.enable started the server on the session file'
  )
  local symbols = c
    and c:request_sync(
      'textDocument/documentSymbol',
      { textDocument = vim.lsp.util.make_text_document_params(0) },
      10000,
      0
    )
  H.check(
    symbols and symbols.result and #symbols.result > 0,
    'document symbols = the tree (' .. (symbols and symbols.result and #symbols.result or 0) .. ' roots)'
  )

  local panel = require('sessiontree.panel')
  H.check(H.show(), ':SessionTree from the session buffer drew rows')
  H.check(panel.same_uri(panel.state.uri, vim.uri_from_fname(file)), ":SessionTree shows the current buffer's session")
  H.check(#vim.lsp.get_clients({ name = 'sessiontree' }) == 1, 'the panel reused the enabled client')
  H.check(
    vim.deep_equal(H.panel_lines(), (H.server_lines())),
    'pi session: the buffer lines equal the server lines',
    { H.panel_lines(), (H.server_lines()) }
  )
  H.check(#panel.state.rows > 5, 'pi session rows drawn (' .. #panel.state.rows .. ')')
  H.check(panel.header():find('CSV importer quoted commas', 1, true), 'pi session name in the header', panel.header())

  local function mapped(lhs)
    return vim.fn.maparg(lhs, 'n', false, true).buffer == 1
  end
  H.check(mapped('n') and not mapped('j') and mapped('k'), 'setup({ keys = { down = "n" } }) maps n, not j; k stays')
  H.check(mapped('<M-o>') and not mapped('<C-S-o>'), 'filter_prev remapped to <M-o>')
  H.check(not mapped('q') and mapped('<Esc>'), 'close = false unmaps q')
  vim.api.nvim_win_set_cursor(panel.state.win, { 1, 0 })
  H.feed('n')
  H.check(vim.api.nvim_win_get_cursor(panel.state.win)[1] == 2, 'the remapped n moves down')
  H.press('<M-o>')
  H.check(panel.state.filter == 'all', '<M-o> cycles back from default to all', panel.state.filter)

  -- pi defers writing a branched file until it has an assistant message: branching from the first
  -- user message gives an unwritten session, which the panel still shows (empty), with the text back.
  local first_user = H.first_user_message(panel.state.uri)
  local source_uri = panel.state.uri
  local messages = H.messages(true)
  local answered, err, result = H.answer(function(done)
    require('sessiontree.actions').branch(first_user.id, done)
  end)
  messages.stop()
  H.check(answered, 'pi: branch from the first user message answered')
  H.check(
    answered and err == nil and result and result.written == false,
    'pi: the branched session is not written yet',
    { err = err, result = result }
  )
  result = result or {}
  H.check(result.newPath == nil or vim.fn.filereadable(result.newPath) == 0, 'pi: no file on disk yet')
  H.check(
    messages.said('written at the first assistant reply'),
    'the user is told when the file will be written',
    messages.texts()
  )
  H.check(
    H.wait(function()
      return not panel.same_uri(panel.state.uri, source_uri)
        and require('sessiontree.chat').input_text() == result.editorText
        and result.editorText:find('CSV importer', 1, true) ~= nil
    end),
    'the panel shows the new session and the message text is in the input',
    { panel.state.uri, require('sessiontree.chat').input_text(), result.editorText, source_uri }
  )
  H.show(file)

  -- K: the entry as markdown in a float.
  local wins = #vim.api.nvim_list_wins()
  H.feed('K')
  H.check(
    H.wait(function()
      return #vim.api.nvim_list_wins() > wins
    end),
    'K opens a float with the entry'
  )
  local float = vim.api.nvim_list_wins()[#vim.api.nvim_list_wins()]
  local text = table.concat(vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(float), 0, -1, false), '\n')
  H.check(vim.api.nvim_win_get_config(float).relative ~= '' and #text > 0, 'the float shows the entry markdown', text)
end)
