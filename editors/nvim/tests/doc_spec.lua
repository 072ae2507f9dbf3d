-- :help sessiontree documents every command, key and option; the help file builds tags and opens.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:gsub('^@', ''), ':p:h') .. '/support/helpers.lua')

H.run(function()
  local doc_path = H.plugin_dir .. '/doc/sessiontree.txt'
  local doc = table.concat(vim.fn.readfile(doc_path), '\n')

  vim.cmd('runtime plugin/sessiontree.lua')
  local commands = vim.tbl_filter(function(name)
    return name:match('^Session') ~= nil
  end, vim.tbl_keys(vim.api.nvim_get_commands({ builtin = false })))
  table.sort(commands)
  H.check(#commands >= 8, #commands .. ' commands registered')
  for _, name in ipairs(commands) do
    H.check(doc:find('*:' .. name .. '*', 1, true), 'command :' .. name .. ' has a help tag')
  end

  local config = require('sessiontree.config')
  for name, lhs in pairs(config.defaults.keys) do
    H.check(doc:find('[' .. name .. ']', 1, true), 'key [' .. name .. '] is documented')
    for _, key in ipairs(type(lhs) == 'table' and lhs or { lhs }) do
      H.check(doc:find(key, 1, true), 'default key ' .. key .. ' (' .. name .. ') is documented')
    end
  end

  local function options(tbl, prefix)
    for key, value in pairs(tbl) do
      local name = prefix .. key
      if key ~= 'keys' then
        H.check(doc:find('\n' .. name .. ' ', 1, true) ~= nil, 'option ' .. name .. ' is documented')
        if type(value) == 'table' and not vim.islist(value) then
          options(value, name .. '.')
        end
      end
    end
  end
  local top = vim.deepcopy(config.defaults)
  -- nil-valued defaults are absent from the table: list them too.
  for _, k in ipairs({ 'cmd', 'omp_agent_dir', 'pi_agent_dir', 'live_writer_seconds', 'keys' }) do
    top[k] = top[k] or false
  end
  options(top, '')
  H.check(doc:find('\nkeys ', 1, true) ~= nil, 'option keys is documented')

  for group in pairs(require('sessiontree.render').groups) do
    H.check(doc:find('\n' .. group .. ' ', 1, true), 'highlight group ' .. group .. ' is documented')
  end

  -- helptags build and :help opens the page.
  local tmp = vim.fn.tempname()
  vim.fn.mkdir(tmp .. '/doc', 'p')
  vim.fn.writefile(vim.fn.readfile(doc_path), tmp .. '/doc/sessiontree.txt')
  local ok, err = pcall(vim.cmd, 'helptags ' .. tmp .. '/doc')
  H.check(ok, ':helptags builds without duplicate or bad tags', err)
  vim.opt.runtimepath:prepend(tmp)
  ok, err = pcall(vim.cmd, 'help sessiontree')
  H.check(
    ok and vim.bo.buftype == 'help' and vim.fn.expand('%:t') == 'sessiontree.txt',
    ':help sessiontree opens the page',
    { err, vim.fn.expand('%:p') }
  )
  for _, tag in ipairs({ 'sessiontree-keys', 'sessiontree-options', ':SessionBranch', 'sessiontree-requirements' }) do
    H.check(pcall(vim.cmd, 'help ' .. tag), ':help ' .. tag)
  end

  -- The README names every command too.
  local readme = table.concat(vim.fn.readfile(H.plugin_dir .. '/README.md'), '\n')
  for _, name in ipairs(commands) do
    H.check(readme:find(':' .. name, 1, true), 'README mentions :' .. name)
  end
end)
