-- :checkhealth sessiontree against the real server: version, binary, protocol, sessions, client,
-- and whether the live agent's pi and omp are found.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:gsub('^@', ''), ':p:h') .. '/support/helpers.lua')

H.run(function()
  local dir = H.workspace({ ['c06.jsonl'] = H.fixture('c06-branch-basic/omp/session.jsonl') })
  H.setup(dir)
  vim.cmd('checkhealth sessiontree')
  local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
  H.check(text:find('OK Neovim 0.', 1, true), 'reports the Neovim version', text)
  H.check(
    text:find('OK server: ', 1, true) and text:find('sessiontree %d+%.%d+'),
    'reports the server binary and its version'
  )
  H.check(text:find('OK protocol version 1', 1, true), 'reports the protocol version')
  H.check(text:find('1 session(s) in ' .. dir .. '/sessions', 1, true), 'reports the session folder found')
  H.check(text:find('OK client %d+ running'), 'reports the client')
  H.check(not text:find('ERROR', 1, true), 'no errors', text)

  -- A missing binary is an error with advice.
  H.stop_server()
  require('sessiontree').setup({ cmd = { dir .. '/no-such-sessiontree', 'lsp' } })
  -- (Read from vim.health directly: a second :checkhealth in one headless run trips a redraw assertion.)
  local ok, err
  ok, err, text = H.health(require('sessiontree.health').check)
  H.check(ok, 'the check runs', err)
  H.check(
    text:find('error server command is not executable', 1, true),
    'a missing binary is reported as an error',
    text
  )

  -- The live agent: an agent found through its option, one whose option names nothing.
  local fake_pi = dir .. '/bin/pi'
  vim.fn.mkdir(dir .. '/bin', 'p')
  vim.fn.writefile({ '#!/bin/sh', 'exit 0' }, fake_pi)
  vim.fn.setfperm(fake_pi, 'rwxr-xr-x')
  require('sessiontree').setup({ agent = { pi_path = fake_pi, omp_path = dir .. '/no-such-omp' } })
  ok, err, text = H.health(require('sessiontree.health').check_agents)
  H.check(ok, 'the agent check runs', err)
  H.check(
    text:find('ok pi: ' .. fake_pi .. ' (from agent.pi_path)', 1, true),
    'pi is reported found, and where from',
    text
  )
  H.check(
    text:find('error omp: `' .. dir .. '/no-such-omp` (from agent.omp_path) does not exist or cannot be run', 1, true),
    'an omp option naming nothing is an error',
    text
  )
  require('sessiontree').setup({ agent = { disabled = true } })
  _, _, text = H.health(require('sessiontree.health').check_agents)
  H.check(text:find('warn the live agent is turned off', 1, true), 'a disabled agent is a warning', text)
end)
