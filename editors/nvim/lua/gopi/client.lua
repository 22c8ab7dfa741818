-- One gopi process in its JSON-RPC mode, through Neovim's own JSON-RPC
-- client (vim.lsp.rpc): requests out, pi/event notifications and gopi's UI
-- requests in. Everything it hands on runs on the main loop, in batches,
-- so a reply of thousands of deltas costs a few redraws, not thousands.
local M = {}

--- Where install.sh puts gopi: $GOPI_INSTALL_DIR, else ~/.local/bin.
local function installed_path()
  local dir = vim.env.GOPI_INSTALL_DIR
  if not dir or dir == "" then
    dir = vim.fn.expand("~/.local/bin")
  end
  return dir .. "/gopi" .. (vim.fn.has("win32") == 1 and ".exe" or "")
end

--- Where the gopi binary is, and how it was found: the cmd option, else
--- `gopi` on PATH, else the one install.sh installed (an editor started
--- from a desktop launcher often lacks ~/.local/bin on its PATH), else
--- bin/gopi of the clone the plugin is in (make build, or the lazy.nvim
--- build step).
---@return string|nil path, string how
function M.binary(cfg)
  if cfg.cmd and cfg.cmd ~= "" then
    local cmd = vim.fn.expand(cfg.cmd)
    if vim.fn.executable(cmd) == 1 then
      return vim.fn.exepath(cmd), "the cmd option"
    end
    return nil, "not found: the cmd option names " .. cfg.cmd .. ", which is not an executable file"
  end
  if vim.fn.executable("gopi") == 1 then
    return vim.fn.exepath("gopi"), "PATH"
  end
  local installed = installed_path()
  if vim.fn.executable(installed) == 1 then
    return installed, "install.sh's folder (" .. vim.fn.fnamemodify(installed, ":h") .. ")"
  end
  -- The plugin lives at <repository>/editors/nvim; `make build` puts gopi in <repository>/bin.
  local here = debug.getinfo(1, "S").source:sub(2)
  local repo = vim.fn.fnamemodify(here, ":p:h:h:h:h:h")
  local built = repo .. "/bin/gopi"
  if vim.fn.executable(built) == 1 then
    return built, "this clone's bin/ (make build, or the lazy.nvim build step)"
  end
  return nil,
    "not found: no cmd option, not on $PATH, not in "
      .. vim.fn.fnamemodify(installed, ":h")
      .. " (install.sh), and no bin/gopi in the repository the plugin is in ("
      .. repo
      .. ")"
end

--- gopi's command line for the options cfg: `--sandbox` only when the
--- sandbox option is set (nil leaves it to gopi), the args option last.
---@return string[]
function M.command(bin, cfg)
  local cmd = { bin, "--mode", "jsonrpc", "--approval", cfg.approval }
  if cfg.sandbox ~= nil then
    vim.list_extend(cmd, { "--sandbox", cfg.sandbox })
  end
  vim.list_extend(cmd, cfg.args or {})
  return cmd
end

local Client = {}
Client.__index = Client

--- Starts gopi and its handshake; requests made meanwhile wait for it.
---@param o {cfg: table, cwd: string, on_events: fun(evs: gopi.Event[]), on_exit: fun(code: integer, signal: integer), on_ready?: fun(c: table), on_error?: fun(msg: string), ui: table, session_file?: string, continue?: boolean}
function M.start(o)
  local bin, how = M.binary(o.cfg)
  if not bin then
    return nil, "gopi " .. how
  end
  -- Options set past setup()'s check: a wrong sandbox never starts gopi
  -- with less confinement than was asked for.
  if not require("gopi.config").valid_sandbox(o.cfg.sandbox) then
    return nil, string.format('the sandbox option is %s: it takes nil (gopi decides), "off", "read-only" or "workspace-write"', vim.inspect(o.cfg.sandbox))
  end
  local cmd = M.command(bin, o.cfg)
  local self = setmetatable({ bin = bin, how = how, cmd = cmd, cwd = o.cwd, queue = {}, flushing = false, closed = false, server_requests = 0 }, Client)
  local env = vim.tbl_extend("force", {}, o.cfg.env or {})
  local dispatchers = {
    notification = function(method, params)
      if method == "pi/event" then
        self:enqueue(params)
      elseif method == "window/showMessage" then
        vim.schedule(function()
          local level = ({ vim.log.levels.ERROR, vim.log.levels.WARN, vim.log.levels.INFO })[params.type] or vim.log.levels.INFO
          vim.notify("gopi: " .. params.message, level)
        end)
      elseif method == "$/progress" then
        vim.schedule(function()
          o.ui.progress(params.value or {})
        end)
      elseif method == "$/cancelRequest" then
        -- gopi withdrew a question it asked (the run was aborted, or it timed out).
        local id = type(params) == "table" and params.id or nil
        if id ~= nil and o.ui.cancel then
          vim.schedule(function()
            o.ui.cancel(id)
          end)
        end
      elseif method:match("^pi/ui/") then
        vim.schedule(function()
          o.ui.notification(method, params)
        end)
      end
    end,
    -- Runs in a coroutine (vim.lsp.rpc): a dialog yields until answered.
    server_request = function(method, params)
      -- vim.lsp.rpc does not hand on a request's id; gopi numbers its own
      -- requests 1, 2, ... (docs/jsonrpc.md), and they come here in order,
      -- so the count is the id a later $/cancelRequest names.
      self.server_requests = self.server_requests + 1
      local id = self.server_requests
      if method == "window/workDoneProgress/create" then
        return vim.NIL
      end
      local handler = o.ui.requests[method]
      if not handler then
        return nil, vim.lsp.rpc.rpc_response_error(vim.lsp.protocol.ErrorCodes.MethodNotFound)
      end
      local result = handler(params, id)
      if result == nil then
        return vim.NIL
      end
      return result
    end,
    on_exit = function(code, signal)
      self.closed = true
      vim.schedule(function()
        o.on_exit(code, signal)
      end)
    end,
    on_error = function() end,
  }
  local ok, rpc = pcall(vim.lsp.rpc.start, cmd, dispatchers, { cwd = o.cwd, env = env, detached = false })
  if not ok then
    return nil, tostring(rpc)
  end
  self.rpc = rpc
  self.on_events = o.on_events
  local init = {
    provider = o.cfg.provider,
    model = o.cfg.model,
    thinkingLevel = o.cfg.thinking_level,
    sessionFile = o.session_file,
    continue = o.continue or nil,
    -- Deltas merged over this window: Neovim's reader pays per message.
    coalesceDeltasMs = o.cfg.coalesce_ms,
  }
  -- Requests made before the handshake is done wait for it.
  self.pending = {}
  rpc.request("initialize", {
    processId = vim.fn.getpid(),
    clientInfo = { name = "gopi.nvim", version = "0.1.0" },
    rootUri = vim.uri_from_fname(o.cwd),
    capabilities = {
      window = { showMessage = {}, workDoneProgress = true },
      experimental = { pi = { ui = true } },
    },
    initializationOptions = init,
  }, function(err, result)
    vim.schedule(function()
      if err then
        if o.on_error then
          o.on_error("initialize failed: " .. (err.message or vim.inspect(err)))
        end
        self:stop()
        return
      end
      rpc.notify("initialized", vim.empty_dict())
      self.version = result and result.serverInfo and result.serverInfo.version or ""
      self.ready = true
      -- on_ready runs first (it shows the session's history); what was
      -- asked meanwhile goes out when it opens the gate.
      if o.on_ready then
        o.on_ready(self)
      else
        self:open_gate()
      end
    end)
  end)
  return self
end

--- Events come in on the read loop; they are rendered on the main loop,
--- all that gathered at once. A request's answer (a function, from
--- Client:request) queues with them, so the main loop sees events and
--- answers in the order gopi wrote them: an event that came after an
--- answer is handled after it.
---@param item gopi.Event|fun()
function Client:enqueue(item)
  table.insert(self.queue, item)
  if self.flushing then
    return
  end
  self.flushing = true
  vim.schedule(function()
    self.flushing = false
    local items = self.queue
    self.queue = {}
    local evs = {}
    for _, it in ipairs(items) do
      if type(it) == "function" then
        if #evs > 0 then
          self.on_events(evs)
          evs = {}
        end
        local ok, err = xpcall(it, debug.traceback)
        if not ok then
          -- What follows still goes; the error is the answer's handler's.
          vim.schedule(function()
            error(err, 0)
          end)
        end
      else
        table.insert(evs, it)
      end
    end
    if #evs > 0 then
      self.on_events(evs)
    end
  end)
end

--- Sends what waited for the handshake (and for on_ready).
function Client:open_gate()
  self.gate_open = true
  local waiting = self.pending
  self.pending = {}
  for _, f in ipairs(waiting) do
    f()
  end
end

--- Sends pi/<command>; cb(err, result) runs on the main loop. now: send
--- even before the gate is open (on_ready's own requests). Each command's
--- params and result are in gopi.Commands (types.lua, from core/api).
---@param command gopi.CommandName
---@param params? table
---@param cb? fun(err: table|nil, result: any)
---@param now? boolean
function Client:request(command, params, cb, now)
  if self.closed or not self.rpc or self.rpc.is_closing() then
    if cb then
      vim.schedule(function()
        cb({ message = "gopi is not running" })
      end)
    end
    return
  end
  if not self.ready or (not self.gate_open and not now) then
    table.insert(self.pending, function()
      self:request(command, params, cb)
    end)
    return
  end
  -- An empty Lua table would be sent as [], not {}.
  if params == nil or (type(params) == "table" and next(params) == nil) then
    params = vim.empty_dict()
  end
  self.rpc.request("pi/" .. command, params, function(err, result)
    if cb then
      self:enqueue(function()
        cb(err, result)
      end)
    end
  end)
end

--- The same, waiting (up to timeout ms) for the answer: for commands and tests.
function Client:call(command, params, timeout)
  local done, e, r = false, nil, nil
  self:request(command, params, function(err, result)
    done, e, r = true, err, result
  end)
  vim.wait(timeout or 10000, function()
    return done
  end, 10)
  if not done then
    return nil, "gopi did not answer " .. command
  end
  if e then
    return nil, e.message or vim.inspect(e)
  end
  return r
end

function Client:running()
  return self.rpc ~= nil and not self.closed and not self.rpc.is_closing()
end

--- Asks gopi to shut down, then ends it.
function Client:stop()
  if not self.rpc or self.closed then
    return
  end
  local rpc = self.rpc
  local finished = false
  rpc.request("shutdown", vim.NIL, function()
    finished = true
  end)
  vim.wait(2000, function()
    return finished or self.closed
  end, 10)
  if not self.closed then
    rpc.notify("exit", vim.NIL)
    vim.wait(1000, function()
      return self.closed
    end, 10)
  end
  if not self.closed then
    rpc.terminate()
  end
end

M.Client = Client
return M
