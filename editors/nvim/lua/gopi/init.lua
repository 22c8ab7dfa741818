-- gopi for Neovim: a chat with the gopi coding agent, driven over its
-- JSON-RPC mode. See :help gopi.
local M = {}

local config = require("gopi.config")
local chat = require("gopi.chat")

function M.setup(opts)
  config.setup(opts)
  -- The prompt's completion source, when nvim-cmp is there to use it.
  require("gopi.cmp").register()
end

--- A statusline component: model · thinking level · context % · cost ·
--- extensions' statuses (lualine: `sections = { lualine_x = { require("gopi").status } }`).
--- Statusline text: a percent sign is doubled, as 'statusline' and the
--- statusline plugins read their components' text as format.
function M.status()
  return (chat.status_text():gsub("%%", "%%%%"))
end

M.toggle = chat.toggle
M.open = chat.open
M.close = chat.close
M.send = chat.send
M.abort = chat.abort

--- :GopiReview: opens the oldest question gopi waits on.
function M.review()
  return require("gopi.review").open()
end

local function client()
  return chat.ensure()
end

local function fail(err)
  if err then
    chat.note(type(err) == "table" and (err.message or vim.inspect(err)) or tostring(err), vim.log.levels.ERROR)
    return true
  end
end

--- Sends pi/<command> (starting gopi first if needed); on_ok(result) runs
--- when it worked, and a failure is reported.
local function ask(command, params, on_ok)
  local c = client()
  if not c then
    return
  end
  c:request(command, params, function(err, res)
    if not fail(err) and on_ok then
      on_ok(res)
    end
  end)
end

local function reload()
  chat.load_history()
  chat.refresh_status()
end

--- :GopiNew
function M.new_session()
  ask("new_session", {}, reload)
end

--- :GopiSessions: this directory's sessions; the one picked is resumed.
function M.sessions()
  ask("list_sessions", {}, function(res)
    vim.ui.select((res or {}).sessions or {}, {
      prompt = "gopi: resume a session",
      kind = "gopi.sessions",
      format_item = function(s)
        local first = (s.name and s.name ~= "") and s.name or (s.firstMessage or ""):gsub("\n.*", "")
        return string.format("%s  (%s, %d messages)", first, s.modified or "", s.messageCount or 0)
      end,
    }, function(s)
      if s then
        ask("switch_session", { sessionPath = s.path }, reload)
      end
    end)
  end)
end

--- :GopiFork: a new session from an earlier message; its text goes back to the prompt.
function M.fork()
  ask("get_fork_messages", {}, function(res)
    vim.ui.select((res or {}).messages or {}, {
      prompt = "gopi: fork from",
      format_item = function(m)
        return ((m.text or ""):gsub("\n.*", ""))
      end,
    }, function(m)
      if not m then
        return
      end
      ask("fork", { entryId = m.entryId }, function(r)
        if r and r.cancelled then
          return
        end
        reload()
        local p = chat.session.prompt
        if p and vim.api.nvim_buf_is_valid(p) then
          vim.api.nvim_buf_set_lines(p, 0, -1, false, vim.split((r or {}).text or "", "\n", { plain = true }))
        end
      end)
    end)
  end)
end

function M.clone()
  ask("clone", {}, reload)
end

function M.rename(name)
  local go = function(n)
    if n and n ~= "" then
      ask("set_session_name", { name = n }, chat.refresh_status)
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
  local set = function(m)
    if m then
      ask("set_model", { provider = m.provider, modelId = m.id }, chat.refresh_status)
    end
  end
  ask("get_available_models", {}, function(res)
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
  if level and level ~= "" then
    ask("set_thinking_level", { level = level }, chat.refresh_status)
  else
    ask("cycle_thinking_level", {}, chat.refresh_status)
  end
end

function M.compact(instructions)
  chat.note("compacting…")
  ask("compact", (instructions and instructions ~= "") and { customInstructions = instructions } or {}, chat.refresh_status)
end

function M.export()
  ask("export_html", {}, function(r)
    if r and r.path then
      chat.note("exported to " .. r.path)
      if vim.ui.open then
        pcall(vim.ui.open, r.path)
      end
    end
  end)
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
