-- luacheck config: Neovim's LuaJIT, `vim` read-only, no other globals.
std = 'luajit'
read_globals = { 'vim' }
max_line_length = 160
files['tests/**/*.lua'] = { read_globals = { 'vim', 'arg' } }
