-- Checks that need no server: protocol.lua lists exactly protocol-ext's methods, no module leaks a
-- global, and an old Neovim gets a clear message.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:gsub('^@', ''), ':p:h') .. '/support/helpers.lua')

H.run(function()
  -- protocol.lua against protocol-ext/src/methods.rs and its submodules (the Rust source of truth).
  local sources = { H.repo .. '/protocol-ext/src/methods.rs' }
  vim.list_extend(sources, vim.fn.glob(H.repo .. '/protocol-ext/src/methods/*.rs', false, true))
  local rust = {}
  for _, file in ipairs(sources) do
    for m in table.concat(vim.fn.readfile(file), '\n'):gmatch('"(sessionTree/%w+)"') do
      rust[m] = true
    end
  end
  local lua = {}
  for _, m in pairs(require('sessiontree.protocol')) do
    lua[m] = true
  end
  local rust_list, lua_list = vim.tbl_keys(rust), vim.tbl_keys(lua)
  table.sort(rust_list)
  table.sort(lua_list)
  H.check(#rust_list >= 26, #rust_list .. ' methods in methods.rs and methods/*.rs')
  H.check(
    vim.deep_equal(rust_list, lua_list),
    'protocol.lua lists exactly the methods of methods.rs',
    { rust = rust_list, lua = lua_list }
  )
  local json_path = H.repo .. '/protocol-ext/generated/protocol.json'
  if vim.fn.filereadable(json_path) == 1 then
    local contract = vim.json.decode(table.concat(vim.fn.readfile(json_path), '\n'))
    local json_list = vim.tbl_map(function(m)
      return m.method
    end, contract.methods)
    table.sort(json_list)
    H.check(
      vim.deep_equal(json_list, lua_list),
      'protocol.lua lists exactly the methods of generated/protocol.json',
      json_list
    )
    H.check(contract.version == 1, 'protocol version 1 (the plugin was written against it)', contract.version)
  else
    H.check(false, 'protocol-ext/generated/protocol.json exists')
  end
  local src = table.concat(vim.fn.readfile(H.plugin_dir .. '/lua/sessiontree/protocol.lua'), '\n')
  local strings = 0
  for _ in src:gmatch("'[^']*'") do
    strings = strings + 1
  end
  H.check(strings == #lua_list, 'protocol.lua holds nothing but the method names', strings)

  -- Method strings are written only in protocol.lua.
  for _, file in ipairs(vim.fn.glob(H.plugin_dir .. '/lua/sessiontree/*.lua', false, true)) do
    if not file:match('protocol%.lua$') then
      local text = table.concat(vim.fn.readfile(file), '\n')
      H.check(
        not text:find("'sessionTree/", 1, true),
        vim.fn.fnamemodify(file, ':t') .. ' uses protocol constants, no raw method strings'
      )
    end
  end

  -- No globals.
  local before = vim.tbl_keys(_G)
  for _, file in ipairs(vim.fn.glob(H.plugin_dir .. '/lua/sessiontree/*.lua', false, true)) do
    require('sessiontree.' .. vim.fn.fnamemodify(file, ':t:r'))
  end
  dofile(H.plugin_dir .. '/lsp/sessiontree.lua')
  local after = vim.tbl_keys(_G)
  local leaked = vim.tbl_filter(function(k)
    return not vim.tbl_contains(before, k)
  end, after)
  H.check(#leaked == 0, 'no module sets a global', leaked)

  -- lsp/sessiontree.lua is a valid vim.lsp.config.
  local cfg = dofile(H.plugin_dir .. '/lsp/sessiontree.lua')
  H.check(
    type(cfg.cmd) == 'table'
      and vim.tbl_contains(cfg.filetypes, 'jsonl')
      and cfg.handlers[require('sessiontree.protocol').DID_CHANGE],
    'lsp/sessiontree.lua: cmd, filetypes, handlers'
  )
  if vim.lsp.config then
    vim.opt.runtimepath:prepend(H.plugin_dir)
    local resolved = vim.lsp.config.sessiontree
    H.check(resolved and resolved.cmd ~= nil, 'vim.lsp.config.sessiontree resolves from the lsp/ folder')
  end

  -- Old Neovim: the plugin file refuses clearly (simulated by hiding nvim-0.10 from has()).
  local has = vim.fn.has
  local errors = {}
  vim.fn.has = function(feature)
    if feature == 'nvim-0.10' then
      return 0
    end
    return has(feature)
  end
  local err_writeln = vim.api.nvim_err_writeln
  vim.api.nvim_err_writeln = function(msg)
    table.insert(errors, msg)
  end
  vim.g.loaded_sessiontree = nil
  dofile(H.plugin_dir .. '/plugin/sessiontree.lua')
  vim.cmd('SessionTree')
  vim.fn.has = has
  vim.api.nvim_err_writeln = err_writeln
  H.check(
    errors[1] and errors[1]:find('needs Neovim 0.10 or newer', 1, true),
    'on Neovim < 0.10 the commands say it needs 0.10',
    errors
  )
end)
