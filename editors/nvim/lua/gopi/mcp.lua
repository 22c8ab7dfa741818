-- :GopiMcp: the session's MCP servers (gopi's get_mcp_servers) and where
-- each stands, the ones that need sign-in and the failed ones first; the
-- one picked shows its tools, or why it has none. :checkhealth gopi uses
-- the same lines.
local M = {}

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
  ["needs-auth"] = "needs sign-in",
  connecting = "is still connecting",
  disconnected = "dropped its connection; the next call reconnects",
  closed = "is closed: the session is ending",
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

--- The server list in vim.ui.select; none configured is said.
---@param servers gopi.MCPServer[]
function M.show(servers)
  if #(servers or {}) == 0 then
    vim.notify(
      "gopi: this session has no MCP servers. Add them to mcp.json in gopi's agent directory (or .pi/mcp.json in a trusted project); --no-mcp turns them off.",
      vim.log.levels.INFO
    )
    return
  end
  vim.ui.select(M.ordered(servers), {
    prompt = "gopi: MCP servers",
    kind = "gopi.mcp_servers",
    format_item = M.format_server,
  }, function(s)
    if s then
      M.show_server(s)
    end
  end)
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
