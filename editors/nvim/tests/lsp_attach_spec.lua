-- vim.lsp.enable('sessiontree') attaches to session files only: not to a project's data.jsonl
-- (which used to get an error diagnostic), but to a session file in a session folder and to one
-- elsewhere that starts with a session header. A missing server binary is said where the user
-- sees it (a message, and :checkhealth), not only in lsp.log.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:gsub('^@', ''), ':p:h') .. '/support/helpers.lua')

H.run(function()
  local dir = H.start({ ['csv.pi.jsonl'] = H.example('csv-importer.pi.jsonl') })
  local messages = H.messages()
  -- A project's own JSON lines, and a session kept outside the agents' folders.
  vim.fn.mkdir(dir .. '/project', 'p')
  vim.fn.writefile({ '{"a":1}', '{"b":2}' }, dir .. '/project/data.jsonl')
  vim.fn.writefile({ '{"type":"other","id":"1"}' }, dir .. '/project/events.jsonl')
  vim.fn.mkdir(dir .. '/elsewhere', 'p')
  vim.fn.writefile(vim.fn.readfile(H.example('csv-importer.omp.jsonl'), 'b'), dir .. '/elsewhere/kept.jsonl', 'b')

  -- The buffers vim.lsp.enable starts a client for.
  local started = {}
  local lsp_start = vim.lsp.start
  vim.lsp.start = function(config, opts)
    table.insert(started, vim.api.nvim_buf_get_name(opts and opts.bufnr or 0))
    return lsp_start(config, opts)
  end
  vim.lsp.enable('sessiontree')
  local function attached(buf)
    return vim.lsp.get_clients({ name = 'sessiontree', bufnr = buf })[1]
  end

  local data = H.edit(dir .. '/project/data.jsonl')
  local events = H.edit(dir .. '/project/events.jsonl')
  -- vim.lsp.enable decides on FileType and starts a client in a scheduled callback (it attaches
  -- once the server answered): once that callback has run, none may have been started for them.
  H.settle()
  H.check(
    #started == 0 and attached(data) == nil and attached(events) == nil,
    'no client on a data.jsonl or another JSON-lines file',
    started
  )
  H.check(
    #vim.diagnostic.get(data) == 0 and #vim.diagnostic.get(events) == 0,
    'no diagnostic on them',
    { vim.diagnostic.get(data), vim.diagnostic.get(events) }
  )

  local session = H.edit(dir .. '/sessions/csv.pi.jsonl')
  H.check(
    H.wait(function()
      local c = attached(session)
      return c and c.initialized
    end, 10000),
    'a session file in a session folder gets the server'
  )
  local kept = H.edit(dir .. '/elsewhere/kept.jsonl')
  H.check(
    H.wait(function()
      return attached(kept) ~= nil
    end, 10000),
    'a session file elsewhere (its first lines: the title slot and a session header) gets the server'
  )
  H.check(attached(data) == nil, 'the data file still has none')
  local errors = vim.tbl_filter(function(m)
    return m.level == vim.log.levels.ERROR or m.level == vim.log.levels.WARN
  end, messages.list)
  H.check(#errors == 0, 'no error or warning so far', errors)

  -- No server binary: a message names it and points at :checkhealth; nothing is started.
  for _, c in ipairs(vim.lsp.get_clients({ name = 'sessiontree' })) do
    c:stop(true)
  end
  H.wait(function()
    return #vim.lsp.get_clients({ name = 'sessiontree' }) == 0
  end)
  -- The binary the plugin finds (setup's cmd, PATH, the checkout's build) is gone; the config is
  -- read again (vim.lsp.config() drops the resolved one).
  require('sessiontree.config').options.cmd = { dir .. '/no-such-sessiontree', 'lsp' }
  vim.lsp.config('sessiontree', {})
  messages.clear()
  vim.cmd('bwipeout! ' .. session)
  local again = H.edit(dir .. '/sessions/csv.pi.jsonl')
  H.check(
    H.wait(function()
      return #messages.list > 0
    end, 5000),
    'opening a session file without the server gives a message',
    messages.list
  )
  local said = table.concat(messages.texts(), '\n')
  H.check(
    said:find('no-such-sessiontree', 1, true) and said:find('not found', 1, true) and said:find(':checkhealth', 1, true),
    'the message names the missing binary and :checkhealth',
    said
  )
  H.check(attached(again) == nil, 'nothing attached')

  -- :checkhealth says it too (captured from vim.health: a headless :checkhealth trips a redraw assertion).
  local ran, err, text = H.health(require('sessiontree.health').check)
  H.check(ran, 'the health check runs', err)
  H.check(
    text:find('error server command is not executable: ' .. dir .. '/no-such-sessiontree', 1, true) ~= nil,
    ':checkhealth reports the missing binary',
    text
  )
  -- A command given to vim.lsp.config that cannot run: Neovim skips the file without a word, so
  -- :checkhealth names it.
  vim.lsp.config('sessiontree', { cmd = { dir .. '/also-missing', 'lsp' } })
  ran, err, text = H.health(require('sessiontree.health').check)
  H.check(ran, 'the health check runs again', err)
  H.check(
    text:find("error vim.lsp.config('sessiontree') runs `" .. dir .. '/also-missing`', 1, true) ~= nil,
    ':checkhealth reports the command vim.lsp.enable cannot start',
    text
  )
end)
