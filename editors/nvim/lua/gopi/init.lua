-- gopi for Neovim: a chat with the gopi coding agent, driven over its
-- JSON-RPC mode. See :help gopi.
local M = {}

local config = require("gopi.config")
local chat = require("gopi.chat")

function M.setup(opts)
  config.setup(opts)
end

--- A statusline component: model · thinking level · context % · cost
--- (lualine: `sections = { lualine_x = { require("gopi").status } }`).
function M.status()
  return chat.status_text()
end

M.toggle = chat.toggle
M.open = chat.open
M.close = chat.close
M.send = chat.send
M.abort = chat.abort

local function client()
  return chat.ensure()
end

local function fail(err)
  if err then
    chat.note(type(err) == "table" and (err.message or vim.inspect(err)) or tostring(err), vim.log.levels.ERROR)
    return true
  end
end

--- :GopiNew
function M.new_session()
  local c = client()
  if not c then
    return
  end
  c:request("new_session", {}, function(err)
    if not fail(err) then
      chat.load_history()
      chat.refresh_status()
    end
  end)
end

--- :GopiSessions: this directory's sessions; the one picked is resumed.
function M.sessions()
  local c = client()
  if not c then
    return
  end
  c:request("list_sessions", {}, function(err, res)
    if fail(err) then
      return
    end
    local list = (res or {}).sessions or {}
    vim.ui.select(list, {
      prompt = "gopi: resume a session",
      kind = "gopi.sessions",
      format_item = function(s)
        local first = (s.name and s.name ~= "") and s.name or (s.firstMessage or ""):gsub("\n.*", "")
        return string.format("%s  (%s, %d messages)", first, s.modified or "", s.messageCount or 0)
      end,
    }, function(s)
      if not s then
        return
      end
      c:request("switch_session", { sessionPath = s.path }, function(e2)
        if not fail(e2) then
          chat.load_history()
          chat.refresh_status()
        end
      end)
    end)
  end)
end

--- :GopiFork: a new session from an earlier message; its text goes back to the prompt.
function M.fork()
  local c = client()
  if not c then
    return
  end
  c:request("get_fork_messages", {}, function(err, res)
    if fail(err) then
      return
    end
    vim.ui.select((res or {}).messages or {}, {
      prompt = "gopi: fork from",
      format_item = function(m)
        return (m.text or ""):gsub("\n.*", "")
      end,
    }, function(m)
      if not m then
        return
      end
      c:request("fork", { entryId = m.entryId }, function(e2, r)
        if fail(e2) or (r and r.cancelled) then
          return
        end
        chat.load_history()
        local p = chat.session.prompt
        if p and vim.api.nvim_buf_is_valid(p) then
          vim.api.nvim_buf_set_lines(p, 0, -1, false, vim.split((r or {}).text or "", "\n", { plain = true }))
        end
      end)
    end)
  end)
end

function M.clone()
  local c = client()
  if c then
    c:request("clone", {}, function(err)
      if not fail(err) then
        chat.load_history()
      end
    end)
  end
end

function M.rename(name)
  local c = client()
  if not c then
    return
  end
  local go = function(n)
    if n and n ~= "" then
      c:request("set_session_name", { name = n }, function(err)
        if not fail(err) then
          chat.refresh_status()
        end
      end)
    end
  end
  if name and name ~= "" then
    go(name)
  else
    vim.ui.input({ prompt = "gopi: session name: " }, go)
  end
end

--- :GopiModel [provider/id]
function M.model(spec)
  local c = client()
  if not c then
    return
  end
  local set = function(m)
    if m then
      c:request("set_model", { provider = m.provider, modelId = m.id }, function(err)
        if not fail(err) then
          chat.refresh_status()
        end
      end)
    end
  end
  c:request("get_available_models", {}, function(err, res)
    if fail(err) then
      return
    end
    local models = (res or {}).models or {}
    if spec and spec ~= "" then
      for _, m in ipairs(models) do
        if m.provider .. "/" .. m.id == spec or m.id == spec then
          return set(m)
        end
      end
      return fail("no model " .. spec)
    end
    vim.ui.select(models, {
      prompt = "gopi: model",
      format_item = function(m)
        return m.provider .. "/" .. m.id .. ((m.name and m.name ~= m.id) and ("  " .. m.name) or "")
      end,
    }, set)
  end)
end

--- :GopiThinking [level]: sets it, or cycles through the model's levels.
function M.thinking(level)
  local c = client()
  if not c then
    return
  end
  local done = function(err)
    if not fail(err) then
      chat.refresh_status()
    end
  end
  if level and level ~= "" then
    c:request("set_thinking_level", { level = level }, done)
  else
    c:request("cycle_thinking_level", {}, done)
  end
end

function M.compact(instructions)
  local c = client()
  if not c then
    return
  end
  chat.note("compacting…")
  c:request("compact", (instructions and instructions ~= "") and { customInstructions = instructions } or {}, function(err)
    if not fail(err) then
      chat.refresh_status()
    end
  end)
end

function M.export()
  local c = client()
  if c then
    c:request("export_html", {}, function(err, r)
      if not fail(err) and r and r.path then
        chat.note("exported to " .. r.path)
        if vim.ui.open then
          pcall(vim.ui.open, r.path)
        end
      end
    end)
  end
end

--- :GopiLog: the plugin's log and gopi's stderr (Neovim's LSP log).
function M.log()
  vim.cmd("tabnew")
  local b = vim.api.nvim_get_current_buf()
  vim.bo[b].buftype = "nofile"
  vim.bo[b].bufhidden = "wipe"
  local lines = vim.list_extend({ "# gopi.nvim", "" }, vim.deepcopy(chat.session.log))
  table.insert(lines, "")
  table.insert(lines, "gopi's stderr goes to Neovim's LSP log: " .. vim.lsp.get_log_path())
  vim.api.nvim_buf_set_lines(b, 0, -1, false, lines)
end

M.restart = chat.restart

--- :GopiChanges: the files the last run changed, in the quickfix list; each opens against
--- its content before the run (gopi's session has it) with :diffsplit.
function M.changes()
  local items = {}
  for path in pairs(chat.session.state.changed or {}) do
    table.insert(items, { filename = path, lnum = 1, text = "changed by gopi" })
  end
  table.sort(items, function(a, b)
    return a.filename < b.filename
  end)
  vim.fn.setqflist({}, " ", { title = "gopi: changed files", items = items })
  if #items > 0 then
    vim.cmd("copen")
  else
    chat.note("the last run changed no file")
  end
end

--- :'<,'>GopiAdd [text]: the selection's path and range, with its lines, into the prompt.
function M.add(line1, line2, text)
  local path = vim.fn.expand("%:.")
  local ref = line1 == line2 and string.format("@%s#L%d", path, line1) or string.format("@%s#L%d-%d", path, line1, line2)
  if not chat.is_open() then
    chat.open()
  end
  local p = chat.session.prompt
  local cur = vim.api.nvim_buf_get_lines(p, 0, -1, false)
  local add = ref .. " " .. (text or "")
  if #cur == 1 and cur[1] == "" then
    cur = { add }
  else
    table.insert(cur, add)
  end
  vim.api.nvim_buf_set_lines(p, 0, -1, false, cur)
end

return M
