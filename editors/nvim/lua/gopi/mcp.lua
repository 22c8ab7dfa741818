-- :GopiMcp: the session's MCP servers (gopi's get_mcp_servers) and where
-- each stands, the ones that need sign-in and the failed ones first, in a
-- float that follows gopi's
-- mcp_server_state events while it is open; <CR> on one shows its tools,
-- or why it has none. A server that fails to connect is a warning
-- (M.changed). :checkhealth gopi uses the same lines.
local M = {}

-- The open float: its buffer, window and servers (as gopi last said).
---@type {buf: integer, win: integer, servers: gopi.MCPServer[]}|nil
M.view = nil
-- The servers whose failure was warned about, until they connect.
local warned = {}
local ns = vim.api.nvim_create_namespace("gopi.mcp")

local function plural(n, one)
  return string.format("%d %s%s", n, one, n == 1 and "" or "s")
end

--- An error that may carry a server's stderr, on one line.
function M.one_line(s)
  return (vim.trim(s or ""):gsub("%s*\n%s*", " · "))
end

--- How much a state needs the user: sign-in first, then failures.
local function attention(state)
  if state == "needs-auth" then
    return 0
  elseif state == "failed" then
    return 1
  end
  return 2
end

--- The servers that need sign-in first, then the failed ones, then mcp.json's order.
---@param servers gopi.MCPServer[]
---@return gopi.MCPServer[]
function M.ordered(servers)
  local out = {}
  for rank = 0, 2 do
    for _, s in ipairs(servers or {}) do
      if attention(s.state) == rank then
        table.insert(out, s)
      end
    end
  end
  return out
end

--- A state in words: pi's "needs sign-in" for needs-auth.
function M.state_label(state)
  return state == "needs-auth" and "needs sign-in" or state
end

--- "state · exposure · N tools", and "resources" when it has some.
---@param s gopi.MCPServer
function M.summary(s)
  local parts = { M.state_label(s.state), s.exposure }
  local n = #(s.tools or {})
  if s.state == "connected" or n > 0 then
    table.insert(parts, plural(n, "tool"))
  end
  if s.resources then
    table.insert(parts, "resources")
  end
  return table.concat(parts, " · ")
end

--- One line of the server list: the name, its summary, and its error.
---@param s gopi.MCPServer
function M.format_server(s)
  local line = string.format("%-16s %s", s.name, M.summary(s))
  if s.error and s.error ~= "" then
    line = line .. " — " .. M.one_line(s.error)
  end
  return line
end

--- One line of a server's tool list: its name there, exposure, read-only, and the model's name.
---@param t gopi.MCPTool
function M.format_tool(t)
  return string.format("%-20s %s%s  (%s)", t.remoteName, t.exposure, t.readOnly and " · read-only" or "", t.name)
end

local why = {
  connecting = "is still connecting",
  disconnected = "dropped its connection; the next call reconnects",
  closed = "is closed: the session is ending",
  ["needs-auth"] = "needs sign-in",
}

--- What picking a server shows: its tools, its error, or why it has no tools.
---@param s gopi.MCPServer
function M.show_server(s)
  if s.state == "failed" then
    vim.notify(string.format("gopi: MCP server %s failed to connect:\n%s", s.name, vim.trim(s.error or "gopi gave no reason")), vim.log.levels.ERROR)
    return
  end
  if #(s.tools or {}) == 0 then
    local reason = why[s.state]
    if s.state == "connected" then
      reason = s.resources and "offers resources but no tools" or "offers no tools"
    elseif s.state == "disabled" then
      reason = string.format('is disabled ("enabled": false in %s)', s.source)
    end
    local more = (s.error and s.error ~= "") and (": " .. M.one_line(s.error)) or ""
    vim.notify(string.format("gopi: MCP server %s %s%s", s.name, reason or s.state, more), vim.log.levels.INFO)
    return
  end
  vim.ui.select(s.tools, {
    prompt = string.format("gopi: tools of MCP server %s (%s, %s)", s.name, M.state_label(s.state), s.exposure),
    kind = "gopi.mcp_tools",
    format_item = M.format_tool,
  }, function() end)
end

-- A server's line is highlighted by its state.
local state_hl = {
  failed = "DiagnosticError",
  connecting = "DiagnosticWarn",
  disconnected = "DiagnosticWarn",
  disabled = "Comment",
  ["needs-auth"] = "DiagnosticWarn",
  closed = "Comment",
}

--- Puts the view's servers in its buffer, the cursor kept on its server.
local function render(v)
  local at = vim.api.nvim_win_is_valid(v.win) and vim.api.nvim_win_get_cursor(v.win)[1] or 1
  local current = v.shown and v.shown[at] and v.shown[at].name
  v.shown = M.ordered(v.servers)
  local lines = vim.tbl_map(M.format_server, v.shown)
  vim.bo[v.buf].modifiable = true
  vim.api.nvim_buf_set_lines(v.buf, 0, -1, false, lines)
  vim.bo[v.buf].modifiable = false
  vim.api.nvim_buf_clear_namespace(v.buf, ns, 0, -1)
  local row = 1
  for i, s in ipairs(v.shown) do
    if state_hl[s.state] then
      vim.api.nvim_buf_set_extmark(v.buf, ns, i - 1, 0, { end_row = i - 1, end_col = #lines[i], hl_group = state_hl[s.state] })
    end
    if s.name == current then
      row = i
    end
  end
  if not vim.api.nvim_win_is_valid(v.win) then
    return
  end
  -- Wide enough for its title and footer.
  vim.api.nvim_win_set_config(v.win, require("gopi.help").centered(lines, 40))
  vim.api.nvim_win_set_cursor(v.win, { row, 0 })
end

--- Closes the float.
function M.close()
  local v = M.view
  M.view = nil
  if v and vim.api.nvim_win_is_valid(v.win) then
    vim.api.nvim_win_close(v.win, true)
  end
end

--- The server list in a float that follows gopi's reports while open:
--- <CR> shows the server under the cursor (M.show_server), q or <Esc>
--- close it, and so does leaving it. None configured is said.
---@param servers gopi.MCPServer[]
function M.show(servers)
  if #(servers or {}) == 0 then
    vim.notify(
      "gopi: this session has no MCP servers. Add them to mcp.json in gopi's agent directory (or .pi/mcp.json in a trusted project); --no-mcp turns them off.",
      vim.log.levels.INFO
    )
    return
  end
  M.close()
  local b = vim.api.nvim_create_buf(false, true)
  vim.bo[b].bufhidden = "wipe"
  vim.bo[b].filetype = "gopi_mcp"
  local win = vim.api.nvim_open_win(b, true, {
    relative = "editor",
    row = 0,
    col = 0,
    width = 40,
    height = 1,
    border = "rounded",
    title = " gopi: MCP servers ",
    footer = " <CR> tools · q close ",
    footer_pos = "right",
    style = "minimal",
  })
  vim.wo[win].cursorline = true
  local v = { buf = b, win = win, servers = servers }
  M.view = v
  render(v)
  local function close()
    if M.view == v then
      M.close()
    end
  end
  local pick = function()
    local s = v.shown[vim.api.nvim_win_get_cursor(win)[1]]
    close()
    if s then
      M.show_server(s)
    end
  end
  vim.keymap.set("n", "<CR>", pick, { buffer = b, nowait = true, desc = "gopi: the server's tools, or why it has none" })
  for _, k in ipairs({ "q", "<Esc>" }) do
    vim.keymap.set("n", k, close, { buffer = b, nowait = true, desc = "gopi: close the MCP servers" })
  end
  vim.api.nvim_create_autocmd("WinLeave", { buffer = b, once = true, callback = close })
  vim.api.nvim_create_autocmd("BufWipeout", {
    buffer = b,
    once = true,
    callback = function()
      if M.view == v then
        M.view = nil
      end
    end,
  })
  return win
end

--- A server changed (gopi's mcp_server_state): the open float follows it.
--- Returns what to warn about when it failed to connect, once until it
--- connects again; nil otherwise.
---@param s gopi.MCPServer
---@return string|nil
function M.changed(s)
  local v = M.view
  if v and vim.api.nvim_buf_is_valid(v.buf) then
    for i, x in ipairs(v.servers) do
      if x.name == s.name then
        v.servers[i] = s
      end
    end
    render(v)
  end
  if s.state == "connected" then
    warned[s.name] = nil
  end
  if s.state ~= "failed" or warned[s.name] then
    return nil
  end
  warned[s.name] = true
  local why = vim.split(vim.trim(s.error or ""), "\n", { plain = true })[1]
  return string.format("MCP server %s failed%s", s.name, why ~= "" and (": " .. why) or "")
end

--- gopi starts anew, and its servers with it: each failure warns again.
function M.reset()
  warned = {}
end

--- :checkhealth gopi's section: each server's state, when a session runs.
function M.check(h, client)
  h.start("gopi: MCP servers")
  if not client then
    h.info("no chat is running: open one (:Gopi), then :checkhealth gopi or :GopiMcp shows its MCP servers")
    return
  end
  local res, err = client:call("get_mcp_servers", {}, 5000)
  if not res then
    h.error("get_mcp_servers: " .. tostring(err))
    return
  end
  if #(res.servers or {}) == 0 then
    h.info("no MCP servers (none in mcp.json, or --no-mcp)")
    return
  end
  for _, s in ipairs(M.ordered(res.servers)) do
    local line = s.name .. ": " .. M.summary(s)
    if s.state == "failed" then
      h.error(line .. ": " .. M.one_line(s.error), { "Check the server's entry in " .. s.source .. "; :GopiMcp shows the whole error" })
    elseif s.state == "connected" then
      h.ok(line)
    elseif s.state == "needs-auth" then
      h.warn(line, { M.one_line(s.error) })
    elseif s.state == "disconnected" or s.state == "connecting" then
      h.warn(line .. ((s.error and s.error ~= "") and (": " .. M.one_line(s.error)) or ""))
    else
      h.info(line)
    end
  end
end

return M
