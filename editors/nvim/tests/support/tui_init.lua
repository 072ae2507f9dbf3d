-- init for the tmux run: the plugin from this checkout, the real server, sessions in $ST_DIR/sessions.
local plugin = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:gsub('^@', ''), ':p:h:h:h')
vim.opt.runtimepath:prepend(plugin)
vim.o.termguicolors = false
vim.o.shortmess = vim.o.shortmess .. 'I'
vim.cmd('runtime plugin/sessiontree.lua')
local dir = vim.env.ST_DIR
require('sessiontree').setup({
  cmd = { vim.env.SESSIONTREE_BIN, 'lsp' },
  extra_roots = { dir .. '/sessions' },
  omp_agent_dir = dir .. '/omp-agent',
  pi_agent_dir = dir .. '/pi-agent',
  panel = { width = 64 },
  agent = { disabled = true }, -- no live agent: an agent installed on the machine must not answer
})
-- The test scripts start typing once this is on the screen: the init has run and the UI is up.
vim.api.nvim_create_autocmd('UIEnter', {
  once = true,
  callback = function()
    vim.schedule(function()
      vim.api.nvim_echo({ { 'tui: ready' } }, false, {})
    end)
  end,
})
