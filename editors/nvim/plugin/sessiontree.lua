-- sessiontree: the session tree of the pi-family coding agents (omp, pi) in Neovim.
-- This file only registers commands; the modules load on first use.

if vim.g.loaded_sessiontree then
  return
end
vim.g.loaded_sessiontree = true

local COMMANDS = {
  'SessionTree',
  'SessionOpen',
  'SessionBranch',
  'SessionLabel',
  'SessionSearch',
  'SessionFilter',
  'SessionSend',
  'SessionAppend',
  'SessionStop',
  'SessionInstallBridge',
  'SessionChat',
  'SessionName',
  'SessionRewindCompare',
  'SessionRewindRestore',
  'SessionRewindUndo',
}

if vim.fn.has('nvim-0.10') == 0 then
  local msg = 'sessiontree needs Neovim 0.10 or newer (this is '
    .. tostring(vim.version and vim.version() or 'older')
    .. '); see :help sessiontree-requirements'
  if vim.api.nvim_create_user_command then
    for _, name in ipairs(COMMANDS) do
      vim.api.nvim_create_user_command(name, function()
        vim.api.nvim_err_writeln(msg)
      end, { nargs = '*', bang = true })
    end
  else
    vim.api.nvim_err_writeln(msg)
  end
  return
end

local function st()
  return require('sessiontree')
end

local command = vim.api.nvim_create_user_command

command('SessionTree', function(o)
  st().tree({ file = o.args, pick = o.bang })
end, { nargs = '?', bang = true, complete = 'file', desc = 'Open the session tree (! = pick a session)' })

command('SessionOpen', function()
  st().open()
end, { nargs = 0, desc = 'Pick a session of the workspace and show its tree' })

command('SessionBranch', function()
  st().branch()
end, { nargs = 0, desc = 'Branch (/branch) from a user message into a new session' })

command('SessionLabel', function(o)
  st().label(o.args, o.bang)
end, { nargs = '?', bang = true, desc = 'Set (or with ! clear) the label of the selected entry' })

command('SessionSearch', function(o)
  st().search(o.args)
end, { nargs = '?', desc = 'Search the tree (no argument: type in the panel)' })

command('SessionFilter', function(o)
  st().filter(o.args)
end, {
  nargs = 1,
  desc = 'Set the tree filter',
  complete = function()
    return { 'default', 'noTools', 'userOnly', 'labeledOnly', 'all' }
  end,
})

command('SessionSend', function(o)
  st().send(o.args)
end, { nargs = '?', desc = "Send the chat input (or the argument) to the session's agent" })

command('SessionAppend', function(o)
  st().append(o.args)
end, { nargs = '?', desc = 'Append the chat input (or the argument) at the leaf without running the agent' })

command('SessionStop', function()
  st().stop()
end, { nargs = 0, desc = "Stop the agent's answer" })

command('SessionInstallBridge', function(o)
  st().install_bridge(o.args)
end, {
  nargs = '?',
  desc = 'Install the sessiontree bridge for pi or omp run in a terminal',
  complete = function()
    return { 'pi', 'omp' }
  end,
})

command('SessionChat', function()
  st().chat()
end, { nargs = 0, desc = 'Open the chat for the session in the panel' })

command('SessionName', function(o)
  st().name(o.args)
end, { nargs = 1, desc = 'Rename the session in the panel' })

command(
  'SessionRewindCompare',
  function(o)
    require('sessiontree.rewind').compare(o.args)
  end,
  { nargs = '?', desc = "Compare the workspace's files with the point of the selected entry (quickfix + diff splits)" }
)

command('SessionRewindRestore', function(o)
  require('sessiontree.rewind').restore(o.args)
end, { nargs = '?', desc = "Restore the workspace's files to the point of the selected entry (asks first)" })

command('SessionRewindUndo', function()
  require('sessiontree.rewind').undo()
end, { nargs = 0, desc = 'Undo the last restore of the workspace (asks first)' })
