-- No request for a session leaves before its open is answered: a resize (WinResized/VimResized
-- redraw the panel), a filter key or a search right after :SessionTree on a session that takes a
-- while to open must wait for the open, not fail with `sessionNotFound` (the server refuses
-- requests for a session it has not opened yet). The tmux run checks the same in a real terminal.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:gsub('^@', ''), ':p:h') .. '/support/helpers.lua')

H.run(function()
  H.start({})
  -- Big enough that its open takes longer than the panel's 30 ms redraw timer.
  local big = H.session('big.jsonl')
  local generated, out = H.generate(big, { '--entries', '20000', '--seed', '5' })
  H.check(generated, 'generated a 20,000-entry session', out)

  local messages = H.messages(true)
  local client = require('sessiontree.client')
  local protocol = require('sessiontree.protocol')
  -- Every request as it reaches the RPC layer, and when the open of the session was answered.
  local sent, opened_at = {}, nil
  local request = client.request
  client.request = function(method, params, handler)
    return request(method, params, function(err, result)
      if method == protocol.OPEN and not err then
        opened_at = opened_at or vim.uv.hrtime()
      end
      table.insert(sent, { method = method, answered = vim.uv.hrtime(), err = err })
      handler(err, result)
    end)
  end

  local panel = require('sessiontree.panel')
  local search = require('sessiontree.search')
  local uri = vim.uri_from_fname(big)
  -- A fresh server each round, and the resize coming a little later each time: while the client
  -- starts, requests wait for `initialize`; each must still reach the server after the open.
  for round, delay in ipairs({ 0, 4, 9, 15, 22, 30 }) do
    sent, opened_at = {}, nil
    messages.clear()
    H.stop_server()
    panel.state.uri = nil
    panel.open(uri)
    if delay > 0 then
      vim.wait(delay)
    end
    -- What a user (or the terminal) does at once: the terminal is resized, a filter key, a search.
    vim.api.nvim_exec_autocmds('VimResized', {})
    panel.refresh()
    search.set_filter('userOnly')
    search.set('plan')
    search.set('')
    search.set_filter('default')
    H.check(
      H.wait(function()
        return opened_at ~= nil and panel.state.pending == 0 and #panel.state.rows > 0
      end, 30000),
      'round ' .. round .. ': the rows are drawn'
    )
    H.wait(panel.idle) -- the redraw timer of the resize, and anything else queued
    local refused = {}
    for _, s in ipairs(sent) do
      if s.err then
        table.insert(refused, s.method .. ': ' .. client.describe(s.err))
      end
    end
    H.check(#refused == 0, 'round ' .. round .. ': no request was refused', refused)
    local errors = {}
    for _, m in ipairs(messages.list) do
      if m.level == vim.log.levels.ERROR or m.msg:find('not open', 1, true) then
        table.insert(errors, m.msg)
      end
    end
    H.check(#errors == 0, 'round ' .. round .. ': no error message', errors)
    H.check(
      vim.deep_equal(H.panel_lines(), (H.server_lines('default', ''))),
      'round ' .. round .. ': the panel shows the default rows'
    )
  end
end)
