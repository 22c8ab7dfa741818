-- Turns pi's events into the chat buffer: markdown, streamed in place.
-- Thinking and tool calls are regions (extmark pairs) that fold closed once
-- complete; a tool call's region shows its arguments, bash's output while
-- it runs, then the result. Nothing here waits or blocks: each call edits
-- the buffer and returns.
local M = {}

local ns = vim.api.nvim_create_namespace("gopi.chat")
M.ns = ns

---@class gopi.Renderer
---@field buf integer
---@field regions {start: integer, stop: integer, open: boolean}[] extmark ids
---@field cards table<string, {start: integer, stop: integer, args: string[], title: string}>
---@field block table|nil the streaming text or thinking block
local R = {}
R.__index = R

function M.new(buf)
  return setmetatable({ buf = buf, regions = {}, cards = {}, block = nil, changed = {} }, R)
end

local function mark(buf, row)
  return vim.api.nvim_buf_set_extmark(buf, ns, row, 0, {})
end

local function row_of(buf, id)
  return vim.api.nvim_buf_get_extmark_by_id(buf, ns, id, {})[1]
end

--- Lines of the buffer (0 when it holds only the empty first line).
function R:count()
  local n = vim.api.nvim_buf_line_count(self.buf)
  if n == 1 and vim.api.nvim_buf_get_lines(self.buf, 0, 1, false)[1] == "" then
    return 0
  end
  return n
end

--- Appends whole lines at the end.
function R:append(lines)
  local n = self:count()
  vim.bo[self.buf].modifiable = true
  if n == 0 then
    vim.api.nvim_buf_set_lines(self.buf, 0, 1, false, lines)
  else
    vim.api.nvim_buf_set_lines(self.buf, n, n, false, lines)
  end
  vim.bo[self.buf].modifiable = false
  return n -- the row of the first appended line
end

--- Appends text where the buffer ends (a streamed delta, maybe with newlines).
function R:stream(text)
  if text == nil or text == "" then
    return
  end
  local n = vim.api.nvim_buf_line_count(self.buf)
  local last = vim.api.nvim_buf_get_lines(self.buf, n - 1, n, false)[1] or ""
  vim.bo[self.buf].modifiable = true
  vim.api.nvim_buf_set_text(self.buf, n - 1, #last, n - 1, #last, vim.split(text, "\n", { plain = true }))
  vim.bo[self.buf].modifiable = false
end

local function split(text)
  return vim.split(text or "", "\n", { plain = true })
end

---@param content gopi.Content[]|string|nil
local function content_text(content)
  if type(content) == "string" then
    return content
  end
  local out = {}
  for _, c in ipairs(content or {}) do
    if c.type == "text" then
      table.insert(out, c.text or "")
    elseif c.type == "image" then
      table.insert(out, require("gopi.image").chip(c))
    end
  end
  return table.concat(out, "\n")
end
M.content_text = content_text

local function tool_title(name, args)
  args = args or {}
  local arg = args.command or args.path or args.pattern or args.query or ""
  arg = tostring(arg):gsub("\n.*", "")
  if arg ~= "" then
    return name .. ": " .. arg
  end
  return name
end

--- Starts a region (thinking, a tool call) at row; it folds when closed.
function R:open_region(row)
  local r = { start = mark(self.buf, row), stop = mark(self.buf, row), open = true }
  table.insert(self.regions, r)
  return r
end

--- Ends region r at last_row and folds it in every window showing the
--- chat (manual folds follow later edits, so the others stay as they are).
function R:close_region(r, last_row, keep_open)
  vim.api.nvim_buf_set_extmark(self.buf, ns, last_row, 0, { id = r.stop })
  r.open = keep_open or false
  r.done = true
  for _, win in ipairs(vim.fn.win_findbuf(self.buf)) do
    vim.api.nvim_win_call(win, function()
      vim.wo.foldmethod = "manual"
      self:fold(r)
    end)
  end
end

--- Folds complete region r in the current window, closed unless marked open.
function R:fold(r)
  local s, e = row_of(self.buf, r.start), row_of(self.buf, r.stop)
  if s and e and e > s then
    vim.cmd(string.format("silent! %d,%dfold", s + 1, e + 1))
    if r.open then
      vim.cmd(string.format("silent! %dfoldopen", s + 1))
    end
  end
end

--- Recreates the folds of every window showing the chat (a new window,
--- or a history shown again): every complete region.
function R:refold()
  for _, win in ipairs(vim.fn.win_findbuf(self.buf)) do
    vim.api.nvim_win_call(win, function()
      vim.wo.foldmethod = "manual"
      vim.cmd("silent! normal! zE")
      for _, r in ipairs(self.regions) do
        if r.done then
          self:fold(r)
        end
      end
    end)
  end
end

--- A "## who" heading. The assistant's messages of one turn (its tool calls
--- between them) share the heading of the first.
function R:header(who)
  if who == "gopi" and self.last_header == "gopi" then
    return
  end
  self.last_header = who
  local n = self:count()
  local lines = { "## " .. who, "" }
  if n > 0 then
    table.insert(lines, 1, "")
  end
  self:append(lines)
end

function R:notice(text)
  self:append({ "", "> " .. text })
end

--- Ends the streaming block, if any, so the next one starts on a new line.
function R:end_block()
  local b = self.block
  self.block = nil
  if b and b.kind == "thinking" then
    self:close_region(b.region, vim.api.nvim_buf_line_count(self.buf) - 1)
  end
end

--- A blank line after the last one, unless it is blank (or the buffer empty).
function R:gap()
  local n = self:count()
  if n > 0 and vim.api.nvim_buf_get_lines(self.buf, n - 1, n, false)[1] ~= "" then
    self:append({ "" })
  end
end

function R:begin_block(kind)
  self:end_block()
  self:gap()
  local row = self:append({ "" })
  local b = { kind = kind }
  if kind == "thinking" then
    vim.bo[self.buf].modifiable = true
    vim.api.nvim_buf_set_lines(self.buf, row, row + 1, false, { "▸ thinking", "" })
    vim.bo[self.buf].modifiable = false
    b.region = self:open_region(row)
  end
  self.block = b
  return b
end

--- The lines of a tool call's card: its title, arguments and what it said.
local function card_lines(card, status, output)
  local icon = ({ running = "◌", done = "✓", error = "✗" })[status] or "◌"
  local lines = { string.format("%s %s", icon, card.title) }
  for _, l in ipairs(card.args) do
    table.insert(lines, "    " .. l)
  end
  if output and output ~= "" then
    table.insert(lines, "    ---")
    local out = split(output)
    if #out > 400 then
      out = vim.list_slice(out, #out - 399, #out)
      table.insert(out, 1, "…")
    end
    for _, l in ipairs(out) do
      table.insert(lines, "    " .. l)
    end
  end
  return lines
end

-- A codemode call's card: the script as a fenced ```javascript block (so
-- markdown highlighting injects JavaScript into it), the tool calls the
-- script made indented under it as one line each, then what the script
-- returned: a status line, its texts, its console output and its error.

--- The fence for code: three backticks, or one more than the longest run
--- of backticks that starts one of its lines.
local function fence(code)
  local n = 3
  for _, l in ipairs(split(code)) do
    local run = l:match("^%s*(`+)")
    if run and #run >= n then
      n = #run + 1
    end
  end
  return string.rep("`", n)
end
M.fence = fence

--- What a call's arguments are shown as on its line: the command, path,
--- pattern or query (its first line), or else the arguments as JSON. args
--- may be a table, or JSON text (the result's list of calls, cut to 200
--- characters).
local function brief(args)
  if type(args) == "string" then
    local ok, decoded = pcall(vim.json.decode, args)
    if not ok or type(decoded) ~= "table" then
      return (args:gsub("%s+", " "))
    end
    args = decoded
  end
  if type(args) ~= "table" then
    return ""
  end
  for _, k in ipairs({ "command", "path", "pattern", "query", "url" }) do
    if type(args[k]) == "string" and args[k] ~= "" then
      return (args[k]:gsub("\n.*", ""))
    end
  end
  if next(args) == nil then
    return ""
  end
  local ok, text = pcall(vim.json.encode, args)
  return ok and text or ""
end
M.brief = brief

--- Reads codemode's result: "Script completed" or "Script failed" and the
--- wall time in the first block, then the texts ("==> text N/M <==" heads
--- each of several), the console lines in <console_output>, a failed
--- script's "Script error:". nil for a result that is not a script's.
---@param content gopi.Content[]|string|nil
---@return {ok: boolean, seconds: string, texts: string[], console: string, error: string}|nil
function M.script_result(content)
  if type(content) ~= "table" or not content[1] or content[1].type ~= "text" then
    return nil
  end
  local word, seconds = (content[1].text or ""):match("^Script (%a+)\nWall time ([%d.]+) seconds\nOutput:\n?$")
  if word ~= "completed" and word ~= "failed" then
    return nil
  end
  local rest = content_text(vim.list_slice(content, 2))
  local r = { ok = word == "completed", seconds = seconds, texts = {}, console = "", error = "" }
  if not r.ok then
    local at
    if rest:sub(1, 14) == "Script error:\n" then
      at = 0
    else
      local from = 1
      while true do
        local i = rest:find("\nScript error:\n", from, true)
        if not i then
          break
        end
        at, from = i, i + 1
      end
    end
    if at then
      r.error = rest:sub(at + 1):gsub("^\n?Script error:\n", "")
      rest = rest:sub(1, math.max(at - 1, 0))
    end
  end
  local i = rest:find("<console_output>\n", 1, true)
  if i and (i == 1 or rest:sub(i - 1, i - 1) == "\n") then
    local body = rest:sub(i + #"<console_output>\n")
    local close = body:find("\n?</console_output>\n?$")
    if close then
      r.console = body:sub(1, close - 1)
      rest = rest:sub(1, math.max(i - 2, 0))
    end
  end
  if rest:match("^==> text 1/%d+ <==\n") then
    local cur
    for _, l in ipairs(split(rest)) do
      if l:match("^==> text %d+/%d+ <==$") then
        cur = {}
        table.insert(r.texts, cur)
      elseif cur then
        table.insert(cur, l)
      end
    end
    for k, v in ipairs(r.texts) do
      r.texts[k] = table.concat(v, "\n")
    end
  elseif rest ~= "" then
    r.texts = { rest }
  end
  return r
end

local call_icon = { running = "◌", ok = "✓", error = "✗", cancelled = "■" }

local function ms(d)
  if type(d) ~= "number" then
    return nil
  end
  if d < 1000 then
    return string.format("%d ms", math.max(1, math.floor(d + 0.5)))
  end
  return string.format("%.1f s", d / 1000)
end

--- The lines of a codemode card.
local function codemode_lines(card, status, content)
  local n = #card.calls
  local counted = n == 0 and "no tool calls" or n == 1 and "1 tool call" or (n .. " tool calls")
  local r = status ~= "running" and M.script_result(content) or nil
  local head = "codemode: " .. counted
  if r then
    head = head .. (r.ok and " · completed in " or " · failed after ") .. r.seconds .. " s"
  end
  local icon = ({ running = "◌", done = "✓", error = "✗" })[status] or "◌"
  local lines = { icon .. " " .. head }
  local f = fence(card.code)
  table.insert(lines, f .. "javascript")
  vim.list_extend(lines, split(card.code))
  table.insert(lines, f)
  for _, call in ipairs(card.calls) do
    local b = call.brief or ""
    local line = string.format("    %s %s%s", call_icon[call.status] or "◌", call.name or "tool", b ~= "" and (": " .. b) or "")
    local note = call.status == "ok" and ms(call.ms)
      or call.status == "error" and ("failed" .. (call.error and call.error ~= "" and (": " .. call.error) or ""))
      or call.status == "cancelled" and "cancelled"
      or nil
    if note then
      line = line .. "  (" .. note .. ")"
    end
    table.insert(lines, line)
  end
  if status == "running" then
    return lines
  end
  table.insert(lines, "    ---")
  if not r then
    for _, l in ipairs(split(content_text(content))) do
      table.insert(lines, "    " .. l)
    end
    return lines
  end
  table.insert(lines, "    " .. (r.ok and "Script completed in " or "Script failed after ") .. r.seconds .. " s")
  -- A part of the result: its label (if any), then its lines, indented.
  local function part(label, text)
    if label then
      table.insert(lines, "    " .. label)
    end
    for _, l in ipairs(split(text)) do
      table.insert(lines, "    " .. l)
    end
  end
  for k, text in ipairs(r.texts) do
    part(#r.texts > 1 and string.format("[text %d of %d]", k, #r.texts) or nil, text)
  end
  if r.console ~= "" then
    part("[console output]", r.console)
  end
  if r.error ~= "" then
    part("[error]", r.error)
  end
  return lines
end

function R:card(id, name, args, parent)
  local c = self.cards[id]
  if c then
    return c
  end
  local host = parent and self.cards[parent]
  if host and host.calls then
    return self:nested_call(host, id, name, args)
  end
  self:end_block()
  -- One line per argument, in name order (a Lua table has none of its own).
  local arg_lines = {}
  local names = vim.tbl_keys(args or {})
  table.sort(names)
  for _, k in ipairs(names) do
    local v = args[k]
    table.insert(arg_lines, k .. ": " .. (type(v) == "string" and v:gsub("\n", "\\n") or vim.json.encode(v)))
  end
  c = { title = tool_title(name, args), args = arg_lines }
  if name == "codemode" and type((args or {}).code) == "string" then
    -- The script's calls, in the order they were made, and by id.
    c.code, c.calls, c.by_id = args.code, {}, {}
  end
  self:gap()
  local row = self:append(c.calls and codemode_lines(c, "running") or card_lines(c, "running"))
  c.region = self:open_region(row)
  vim.api.nvim_buf_set_extmark(self.buf, ns, vim.api.nvim_buf_line_count(self.buf) - 1, 0, { id = c.region.stop })
  self.cards[id] = c
  return c
end

--- The number a nested call's id ends with ("<parent>/<n>"); math.huge
--- for an id without one.
local function call_number(id)
  return tonumber(id:match("/(%d+)$")) or math.huge
end

--- Puts call among calls in the order the script made them (the number
--- its id ends with): calls run at once start in any order.
local function insert_call(calls, call)
  local n = call_number(call.id)
  for i, other in ipairs(calls) do
    if call_number(other.id) > n then
      table.insert(calls, i, call)
      return
    end
  end
  table.insert(calls, call)
end

--- One of a codemode script's calls (id), a line on its card host: made
--- when it is first heard of (its start, or the script's list of calls,
--- whichever comes first), and found again by its id.
function R:nested_call(host, id, name, args)
  local call = host.by_id[id]
  if not call then
    call = { id = id, status = "running", host = host }
    host.by_id[id] = call
    insert_call(host.calls, call)
    self.cards[id] = call
  end
  if name and name ~= "" then
    call.name = name
  end
  -- The event's arguments are whole; the list's are JSON, cut.
  if type(args) == "table" or (args ~= nil and call.brief == nil) then
    call.brief = brief(args)
  end
  self:fill_card(host, "running")
  return call
end

--- Brings a codemode card's lines in line with its result's list of
--- calls (details.calls: in a history, the only record of them).
function R:sync_calls(host, details)
  local calls = type(details) == "table" and details.calls
  if type(calls) ~= "table" then
    return
  end
  for _, rec in ipairs(calls) do
    if type(rec) == "table" and type(rec.id) == "string" then
      local call = host.by_id[rec.id]
      if not call then
        call = { id = rec.id, status = "running", host = host, name = rec.name, brief = brief(rec.args) }
        host.by_id[rec.id] = call
        insert_call(host.calls, call)
        self.cards[rec.id] = call
      end
      if rec.status ~= "running" then
        call.status = rec.status == "ok" and "ok" or rec.status == "cancelled" and "cancelled" or "error"
        call.ms = rec.durationMs or call.ms
        if type(rec.error) == "string" and rec.error ~= "" then
          call.error = (rec.error:gsub("\n.*", ""))
        end
      end
    end
  end
end

--- A nested call ended: its line says how, and its card is drawn again.
function R:end_call(call, is_error, content, duration)
  local text = content_text(content)
  call.status = not is_error and "ok" or text:match("^%s*[Oo]peration aborted%.?%s*$") and "cancelled" or "error"
  call.ms = duration or call.ms
  if call.status == "error" and text ~= "" then
    call.error = (text:gsub("^%s+", ""):gsub("\n.*", ""))
  end
  self:fill_card(call.host, "running")
end

--- Fills card c with its status and output. A card is finished once: its
--- result arrives twice (the tool's end, then its message), and a second
--- fold over the same lines would nest (zo would open only one of them).
--- A codemode card takes the result's content (and details, its calls).
function R:fill_card(c, status, output, details)
  if c.finished then
    return
  end
  local s, e = row_of(self.buf, c.region.start), row_of(self.buf, c.region.stop)
  local lines
  if c.calls then
    self:sync_calls(c, details)
    lines = codemode_lines(c, status, output)
  else
    lines = card_lines(c, status, type(output) == "table" and content_text(output) or output)
  end
  vim.bo[self.buf].modifiable = true
  vim.api.nvim_buf_set_lines(self.buf, s, e + 1, false, lines)
  vim.bo[self.buf].modifiable = false
  vim.api.nvim_buf_set_extmark(self.buf, ns, s, 0, { id = c.region.start })
  local last = s + #lines - 1
  vim.api.nvim_buf_set_extmark(self.buf, ns, last, 0, { id = c.region.stop })
  if status ~= "running" then
    c.finished = true
    self:close_region(c.region, last, status == "error")
  end
end

--- A whole message (from history, or message_end of a user message).
---@param m gopi.Message
function R:message(m)
  if m.role == "user" then
    self:header("You")
    self:append(split(require("gopi.context").compact(content_text(m.content))))
  elseif m.role == "assistant" then
    self:header("gopi")
    for _, c in ipairs(m.content or {}) do
      if c.type == "text" then
        self:begin_block("text")
        self:stream(c.text)
      elseif c.type == "thinking" then
        self:begin_block("thinking")
        self:stream(c.thinking)
      elseif c.type == "toolCall" then
        self:card(c.id or "", c.name or "tool", c.arguments)
      end
    end
    self:end_block()
    self:ending(m)
  elseif m.role == "toolResult" then
    local c = self.cards[m.toolCallId or ""]
    if c and c.region then
      self:fill_card(c, m.isError and "error" or "done", m.content, m.details)
    end
  elseif m.role == "bashExecution" then
    self:header("You ran")
    self:append(vim.list_extend({ "$ " .. (m.command or "") }, split(m.output)))
  elseif m.role == "compactionSummary" then
    self:notice("earlier messages were compacted into a summary")
  elseif m.role == "custom" and m.display ~= false then
    self:append(vim.list_extend({ "" }, split(content_text(m.content))))
    -- What follows it is headed again.
    self.last_header = nil
  end
end

---@param m gopi.AssistantMessage
function R:ending(m)
  if m.stopReason == "aborted" then
    self:notice("stopped")
  elseif m.stopReason == "error" and m.errorMessage then
    self:append({ "", "**Error:** " .. m.errorMessage:gsub("\n", " ") })
  end
end

---@param ev gopi.Event a pi event
---@param state table the session's state: streaming, queue, changed files
function R:event(ev, state)
  local t = ev.type
  if t == "agent_start" then
    state.streaming = true
    state.changed = {}
  elseif t == "agent_settled" then
    state.streaming = false
    self:end_block()
  elseif t == "message_start" then
    local m = ev.message or {}
    if m.role == "assistant" then
      self:header("gopi")
    elseif m.role == "user" or m.role == "bashExecution" or m.role == "custom" then
      self:message(m)
    end
  elseif t == "message_update" then
    local e = ev.assistantMessageEvent or {}
    local k = e.type
    if k == "text_start" then
      self:begin_block("text")
    elseif k == "thinking_start" then
      self:begin_block("thinking")
    elseif k == "text_delta" or k == "thinking_delta" then
      if not self.block then
        self:begin_block(k == "text_delta" and "text" or "thinking")
      end
      self:stream(e.delta)
    elseif k == "text_end" or k == "thinking_end" then
      self:end_block()
    end
  elseif t == "message_end" then
    local m = ev.message or {}
    if m.role == "assistant" then
      self:end_block()
      self:ending(m)
    elseif m.role == "toolResult" then
      self:message(m)
    end
  elseif t == "tool_execution_start" then
    local c = self:card(ev.toolCallId or "", ev.toolName or "tool", ev.args, ev.parentToolCallId)
    local args = ev.args or {}
    if (ev.toolName == "edit" or ev.toolName == "write") and type(args.path) == "string" then
      state.changed[args.path] = true
    end
    return c
  elseif t == "tool_execution_update" then
    local c = self.cards[ev.toolCallId or ""]
    local partial = ev.partialResult or {}
    if c and c.calls then
      -- A script's output so far is the list of its calls.
      self:sync_calls(c, partial.details)
      self:fill_card(c, "running")
    elseif c and c.region then
      self:fill_card(c, "running", content_text(partial.content))
    end
  elseif t == "tool_execution_end" then
    local c = self.cards[ev.toolCallId or ""]
    local result = ev.result or {}
    if c and c.host then
      self:end_call(c, ev.isError, result.content, ev.durationMs)
    elseif c then
      self:fill_card(c, ev.isError and "error" or "done", result.content, result.details)
    end
  elseif t == "compaction_start" then
    self:notice(ev.reason == "overflow" and "the context overflowed: compacting…" or "compacting the context…")
  elseif t == "compaction_end" then
    if ev.aborted then
      self:notice("compaction cancelled")
    elseif ev.errorMessage then
      self:notice("compaction failed: " .. ev.errorMessage)
    else
      self:notice("the context was compacted")
    end
  elseif t == "auto_retry_start" then
    self:notice(
      string.format(
        "retrying in %d s (attempt %d of %d): %s",
        math.floor((ev.delayMs or 0) / 1000 + 0.5),
        ev.attempt or 0,
        ev.maxAttempts or 0,
        (ev.errorMessage or ""):gsub("\n", " ")
      )
    )
  elseif t == "auto_retry_end" then
    if not ev.success then
      self:notice("gave up retrying: " .. (ev.finalError or ""))
    end
  elseif t == "queue_update" then
    state.queue = { steering = ev.steering or {}, followUp = ev.followUp or {} }
  end
end

function R:clear()
  vim.bo[self.buf].modifiable = true
  vim.api.nvim_buf_set_lines(self.buf, 0, -1, false, {})
  vim.bo[self.buf].modifiable = false
  vim.api.nvim_buf_clear_namespace(self.buf, ns, 0, -1)
  self.regions, self.cards, self.block, self.last_header = {}, {}, nil, nil
end

return M
