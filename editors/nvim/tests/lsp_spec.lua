-- vim.lsp.enable('sessiontree') with the lsp/ config: the server attaches to a session file, gives
-- it the standard features, and the panel reuses that client. Also a pi-dialect session.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:gsub('^@', ''), ':p:h') .. '/support/helpers.lua')

H.run(function()
  local dir = H.workspace({
    ['csv.pi.jsonl'] = H.repo .. '/examples/csv-importer.pi.jsonl',
  })
  H.setup(dir)
  vim.cmd('runtime plugin/sessiontree.lua')
  local file = dir .. '/sessions/csv.pi.jsonl'

  vim.lsp.config('sessiontree', { cmd = { vim.env.SESSIONTREE_BIN or (H.repo .. '/target/debug/sessiontree'), 'lsp' } })
  vim.lsp.enable('sessiontree')
  vim.cmd.edit(file)
  vim.bo.filetype = 'jsonl' -- -u NONE does no filetype detection
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
  H.check(
    H.redraw_after(function()
      vim.cmd('SessionTree')
    end, 10000),
    ':SessionTree from the session buffer drew rows'
  )
  H.check(panel.same_uri(panel.state.uri, vim.uri_from_fname(file)), ":SessionTree shows the current buffer's session")
  H.check(#vim.lsp.get_clients({ name = 'sessiontree' }) == 1, 'the panel reused the enabled client')
  H.check(
    vim.deep_equal(H.panel_lines(), (H.server_lines())),
    'pi session: the buffer lines equal the server lines',
    { H.panel_lines(), (H.server_lines()) }
  )
  H.check(#panel.state.rows > 5, 'pi session rows drawn (' .. #panel.state.rows .. ')')
  H.check(panel.header():find('CSV importer quoted commas', 1, true), 'pi session name in the header', panel.header())
end)
