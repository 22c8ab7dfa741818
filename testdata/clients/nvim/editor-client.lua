-- Drives the gopi binary through Neovim's own LSP RPC client (vim.lsp.rpc)
-- in gopi's JSON-RPC 2.0 dialect: initialize with Neovim's client
-- capabilities, an approval dialog answered through
-- window/showMessageRequest, pi/event notifications, work-done progress, a
-- run cancelled with $/cancelRequest, then shutdown and exit. A second gopi
-- checks that exit without shutdown ends with code 1.
--
-- Run through run.sh; directly:
--
--   GOPI_BIN=/path/to/gopi nvim --headless --clean -c 'luafile editor-client.lua' </dev/null
--
-- nvim exits 0 when every check passed and 1 otherwise, naming the failed
-- check. gopi runs in fresh temp directories (cwd and PI_CODING_AGENT_DIR)
-- with no API keys, so the offline faux model answers
-- (core/llm/faux/README.md).

local uv = vim.uv or vim.loop

-- How long one wait may take before the check fails instead of hanging.
local WAIT_MS = 30000

local function say(fmt, ...)
  io.stdout:write(string.format(fmt, ...), '\n')
end

-- A failed check: error() with a table, so main can tell it from a bug.
local function fail(fmt, ...)
  error({ msg = string.format(fmt, ...) }, 2)
end

local function check(cond, fmt, ...)
  if not cond then
    fail(fmt, ...)
  end
end

local function eq(got, want, what)
  if not vim.deep_equal(got, want) then
    fail('%s: got %s, want %s', what, vim.inspect(got), vim.inspect(want))
  end
end

local function wait(cond, what)
  if not vim.wait(WAIT_MS, cond, 10) then
    fail('timed out after %d ms waiting for %s', WAIT_MS, what)
  end
end

local function read_file(path)
  local f = io.open(path, 'rb')
  if not f then
    return nil
  end
  local s = f:read('*a')
  f:close()
  return s
end

-- vim.lsp.rpc.start took (cmd, args, dispatchers, extra) up to 0.9 and
-- (cmd_list, dispatchers, extra) from 0.10 on.
local function rpc_start(cmd, dispatchers, extra)
  if vim.fn.has('nvim-0.10') == 1 then
    return vim.lsp.rpc.start(cmd, dispatchers, extra)
  end
  return vim.lsp.rpc.start(cmd[1], vim.list_slice(cmd, 2), dispatchers, extra)
end

local function version()
  local v = vim.version()
  return string.format('%d.%d.%d', v.major, v.minor, v.patch)
end

local gopi_bin = os.getenv('GOPI_BIN')
local tmp_root = uv.fs_realpath(os.getenv('TMPDIR') or '/tmp')
local servers = {} -- every gopi started, for diagnostics and cleanup

-- start runs one gopi --mode rpc under vim.lsp.rpc and records what it
-- sends. Its stderr goes to a file (Neovim would only log it), shown when
-- a check fails.
local function start(args)
  local root = assert(uv.fs_mkdtemp(tmp_root .. '/gopi-nvim-XXXXXX'))
  local s = {
    root = root,
    cwd = root .. '/work',
    agent_dir = root .. '/agent',
    stderr_file = root .. '/gopi.stderr',
    events = {}, -- pi/event params
    dialogs = {}, -- window/showMessageRequest params
    created = {}, -- window/workDoneProgress/create tokens
    progress = {}, -- $/progress params
    other = {}, -- anything else the server sent
    errors = {}, -- client-side errors (on_error)
  }
  assert(uv.fs_mkdir(s.cwd, 448))
  assert(uv.fs_mkdir(s.agent_dir, 448))

  local dispatchers = {
    notification = function(method, params)
      if method == 'pi/event' then
        table.insert(s.events, params)
      elseif method == '$/progress' then
        table.insert(s.progress, params)
      else
        table.insert(s.other, { method = method, params = params })
      end
    end,
    server_request = function(method, params)
      if method == 'window/showMessageRequest' then
        table.insert(s.dialogs, params)
        return { title = 'Allow' }
      elseif method == 'window/workDoneProgress/create' then
        table.insert(s.created, params.token)
        return vim.NIL
      end
      table.insert(s.other, { method = method, params = params })
      return nil, vim.lsp.rpc.rpc_response_error(vim.lsp.protocol.ErrorCodes.MethodNotFound)
    end,
    on_error = function(kind, err)
      table.insert(s.errors, { kind = vim.lsp.rpc.client_errors[kind] or kind, err = tostring(err) })
    end,
    on_exit = function(code, signal)
      s.exit = { code = code, signal = signal }
    end,
  }
  local cmd = vim.list_extend({
    'sh',
    '-c',
    'exec "$0" "$@" 2>"$GOPI_STDERR_FILE"',
    gopi_bin,
    '--mode',
    'rpc',
    '--model',
    'faux/faux-1',
  }, args or {})
  s.client = rpc_start(cmd, dispatchers, {
    cwd = s.cwd,
    env = {
      PI_CODING_AGENT_DIR = s.agent_dir,
      GOPI_STDERR_FILE = s.stderr_file,
      ANTHROPIC_API_KEY = '',
      OPENAI_API_KEY = '',
      GEMINI_API_KEY = '',
    },
  })
  check(s.client, 'vim.lsp.rpc.start could not start %s', gopi_bin)
  table.insert(servers, s)
  return s
end

-- request sends one request and waits for its answer; it returns the
-- error, the result (nil for JSON null) and the request's id.
local function request(s, method, params)
  local done, err, result = false, nil, nil
  local ok, id = s.client.request(method, params, function(e, r)
    done, err, result = true, e, r
  end)
  check(ok, 'could not send %s', method)
  wait(function()
    return done
  end, 'the response to ' .. method)
  if result == vim.NIL then
    result = nil
  end
  return err, result, id
end

-- wait_event waits for a pi/event of the given type after index from.
local function wait_event(s, type_, from, pred)
  local found
  wait(function()
    for i = from + 1, #s.events do
      local ev = s.events[i]
      if ev.type == type_ and (pred == nil or pred(ev)) then
        found = ev
        return true
      end
    end
    return false
  end, 'pi/event ' .. type_)
  return found
end

local function text_of(message)
  if type(message.content) == 'string' then
    return message.content
  end
  local parts = {}
  for _, b in ipairs(message.content) do
    if b.type == 'text' then
      table.insert(parts, b.text)
    end
  end
  return table.concat(parts)
end

local function initialize(s)
  -- Neovim's own capabilities (window.showMessage, window.workDoneProgress)
  -- plus the pi extension.
  local caps = vim.tbl_deep_extend('force', vim.lsp.protocol.make_client_capabilities(), {
    experimental = { pi = { ui = true } },
  })
  local err, res = request(s, 'initialize', {
    processId = vim.fn.getpid(),
    clientInfo = { name = 'Neovim', version = version() },
    rootUri = vim.uri_from_fname(s.cwd),
    capabilities = caps,
  })
  check(err == nil, 'initialize failed: %s', vim.inspect(err))
  s.client.notify('initialized', vim.empty_dict())
  return res
end

local function shutdown_and_exit(s, want_code)
  local err, res = request(s, 'shutdown', nil)
  check(err == nil, 'shutdown failed: %s', vim.inspect(err))
  eq(res, nil, 'shutdown result')
  s.client.notify('exit', nil)
  wait(function()
    return s.exit ~= nil
  end, 'gopi to exit')
  eq(s.exit.code, want_code, 'exit code after shutdown and exit')
end

local function round_trip()
  local s = start({ '--approval', 'writes' })
  local init = initialize(s)
  eq(init.serverInfo.name, 'gopi', 'serverInfo.name')
  local pi = init.capabilities.experimental.pi
  check(pi ~= nil, 'initialize result lacks capabilities.experimental.pi')
  eq(pi.protocolVersion, 1, 'pi.protocolVersion')
  check(vim.tbl_contains(pi.commands, 'pi/prompt'), 'pi.commands lacks pi/prompt')

  local err, state = request(s, 'pi/get_state', vim.empty_dict())
  check(err == nil, 'pi/get_state failed: %s', vim.inspect(err))
  eq(state.model.id, 'faux-1', 'model')

  -- An approved write.
  local perr, pres = request(s, 'pi/prompt', { message = 'write: notes.txt :: hello' })
  check(perr == nil, 'pi/prompt failed: %s', vim.inspect(perr))
  eq(pres and pres.disposition, 'started', 'pi/prompt result')
  local end1 = wait_event(s, 'agent_end', 0)
  eq(#s.dialogs, 1, 'approval requests')
  local ask = s.dialogs[1]
  eq(ask.type, 3, 'showMessageRequest type')
  check(ask.message:find('notes.txt', 1, true), 'showMessageRequest message %q does not name the file', ask.message)
  eq(ask.actions, { { title = 'Allow' }, { title = 'Allow always' }, { title = 'Deny' } }, 'actions')
  eq(ask.details.toolName, 'write', 'details.toolName')
  eq(ask.details.args, { path = 'notes.txt', content = 'hello' }, 'details.args')
  local tool_start = wait_event(s, 'tool_execution_start', 0)
  eq(tool_start.toolName, 'write', 'tool_execution_start toolName')
  local tool_end = wait_event(s, 'tool_execution_end', 0)
  eq(tool_end.isError, false, 'tool_execution_end isError')
  local roles = vim.tbl_map(function(m)
    return m.role
  end, end1.messages)
  -- pi 1.5: the first request records the system prompt and tools.
  eq(roles, { 'system', 'user', 'assistant', 'toolResult', 'assistant' }, 'agent_end roles')
  eq(read_file(s.cwd .. '/notes.txt'), 'hello', 'notes.txt')

  -- The run's progress: one token created, then begin, reports, end.
  wait(function()
    local last = s.progress[#s.progress]
    return last ~= nil and last.value.kind == 'end'
  end, 'the progress of the write run to end')
  eq(#s.created, 1, 'progress tokens created')
  local kinds, reported = {}, false
  for _, p in ipairs(s.progress) do
    eq(p.token, s.created[1], 'progress token')
    table.insert(kinds, p.value.kind)
    if p.value.kind == 'report' and (p.value.message or ''):find('^write: .*notes%.txt') then
      reported = true
    end
  end
  eq(kinds[1], 'begin', 'first progress kind')
  eq(s.progress[1].value.title, 'gopi', 'progress title')
  check(reported, 'no progress report for the write: %s', vim.inspect(s.progress))
  for i = 2, #kinds - 1 do
    eq(kinds[i], 'report', 'progress kind ' .. i)
  end

  -- A long stream, cancelled by $/cancelRequest of its pi/prompt's id.
  local from = #s.events
  local serr, _, prompt_id = request(s, 'pi/prompt', { message = 'stream: 2000' })
  check(serr == nil, 'second pi/prompt failed: %s', vim.inspect(serr))
  wait_event(s, 'message_update', from, function(ev)
    return ev.assistantMessageEvent ~= nil and ev.assistantMessageEvent.type == 'text_delta'
  end)
  check(s.client.notify('$/cancelRequest', { id = prompt_id }), 'could not send $/cancelRequest')
  local end2 = wait_event(s, 'agent_end', from)
  local last = end2.messages[#end2.messages]
  eq(last.role, 'assistant', 'last message role')
  eq(last.stopReason, 'aborted', 'stopReason of the cancelled run')
  check(not text_of(last):find('2000$'), 'the stream ran to its end')
  eq(#s.dialogs, 1, 'approval requests after the stream')

  shutdown_and_exit(s, 0)
  check(#s.errors == 0, 'client errors: %s', vim.inspect(s.errors))
end

local function exit_without_shutdown()
  local s = start()
  eq(initialize(s).serverInfo.name, 'gopi', 'serverInfo.name')
  s.client.notify('exit', nil)
  wait(function()
    return s.exit ~= nil
  end, 'gopi to exit')
  eq(s.exit.code, 1, 'exit code after exit without shutdown')
end

local function kill(s)
  if s.exit == nil and s.client then
    if s.client.terminate then
      s.client.terminate()
    elseif s.client.pid then
      uv.kill(s.client.pid, 'sigkill')
    end
    vim.wait(5000, function()
      return s.exit ~= nil
    end, 10)
  end
end

local function main()
  check(gopi_bin and gopi_bin ~= '', 'GOPI_BIN must name the gopi binary')
  check(vim.fn.executable(gopi_bin) == 1, 'gopi binary %s is not executable', gopi_bin)
  say('nvim %s', version())
  local cases = {
    { 'round trip: initialize, approved write, progress, cancelled run, shutdown, exit', round_trip },
    { 'exit without shutdown ends gopi with code 1', exit_without_shutdown },
  }
  local failures = 0
  for _, c in ipairs(cases) do
    local name, fn = c[1], c[2]
    local first = #servers + 1
    local t0 = uv.hrtime()
    local ok, err = xpcall(fn, function(e)
      if type(e) == 'table' and e.msg then
        return e.msg
      end
      return debug.traceback(tostring(e), 2)
    end)
    for i = first, #servers do
      kill(servers[i])
    end
    local ms = math.floor((uv.hrtime() - t0) / 1e6)
    if ok then
      say('ok - %s (%d ms)', name, ms)
    else
      failures = failures + 1
      say('not ok - %s (%d ms)\n  %s', name, ms, err)
      for i = first, #servers do
        local s = servers[i]
        say('  gopi stderr (%s):\n%s', s.root, read_file(s.stderr_file) or '')
        if #s.other > 0 then
          say('  other server messages: %s', vim.inspect(s.other))
        end
      end
    end
  end
  for _, s in ipairs(servers) do
    vim.fn.delete(s.root, 'rf')
  end
  return failures
end

local ok, failures = pcall(main)
if not ok then
  io.stdout:write('not ok - ', type(failures) == 'table' and failures.msg or tostring(failures), '\n')
  vim.cmd('cquit 1')
elseif failures > 0 then
  vim.cmd('cquit 1')
else
  vim.cmd('qall!')
end
