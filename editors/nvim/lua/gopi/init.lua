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
  return (chat.current():status_text():gsub("%%", "%%%%"))
end

--- Whether the gopi binary is there; when it is not, says so (once for
--- the command that needed it) and what to do, and nothing opens.
function M.found()
  local bin, how = require("gopi.client").binary(config.options)
  if bin then
    return true
  end
  vim.notify(
    "gopi: the gopi binary was " .. how .. ". Run `make build` in the gopi repository," .. " put gopi on $PATH, or set `cmd` in setup() (:help gopi-binary).",
    vim.log.levels.ERROR
  )
  return false
end

function M.toggle()
  local c = chat.current()
  if c:is_open() or M.found() then
    c:toggle()
  end
end

--- Opens the chat; false when there is no gopi to talk to.
function M.open()
  if not M.found() then
    return false
  end
  chat.current():open()
  return true
end

function M.close()
  chat.current():close()
end

function M.abort()
  chat.current():abort()
end

-- The prompt window's text and :Gopi's go through here: a built-in slash
-- command runs in the editor; otherwise each @file's content goes along,
-- what each #mention names (#diff when git is through, in the background),
-- and each @image (an @path naming a png, jpeg, gif or webp file) goes as
-- an image with the attached ones (images). An image that cannot go stops
-- the message: it says why, and the text and images go back to the prompt.
-- (The chat's prompt window sends through here too.)
local expanding = {}
function M.send(text, mode, images)
  images = images or {}
  local c = chat.current()
  if require("gopi.slash").run(text) then
    c:restore(nil, images)
    return
  end
  if not c:running() and not M.found() then
    return c:restore(text, images)
  end
  -- Messages go in the order they were sent, whether one waits on git or
  -- on its images or not; one whose images cannot go is dropped.
  local item = { mode = mode }
  table.insert(expanding, item)
  local function flush()
    while expanding[1] and (expanding[1].dropped or (expanding[1].text and expanding[1].images)) do
      local it = table.remove(expanding, 1)
      if not it.dropped then
        c:send(it.text, it.mode, it.images)
      end
    end
  end
  local image = require("gopi.image")
  local function drop(msg)
    c:note(msg .. ": nothing was sent", vim.log.levels.ERROR)
    item.dropped = true
    flush()
    c:restore(text, images)
  end
  image.read_all(image.refs(text), function(refs, err)
    if not refs then
      return drop(err)
    end
    -- An image attached and named with @ too goes once.
    local all, seen, total = {}, {}, 0
    for _, img in ipairs(vim.list_extend(vim.list_slice(images), refs)) do
      if not seen[img.data] then
        seen[img.data] = true
        table.insert(all, img)
        total = total + img.size
      end
    end
    if total > image.max_total then
      return drop(string.format("the images come to %s, over %s", image.size_text(total), image.size_text(image.max_total)))
    end
    item.images = all
    flush()
  end)
  -- What the editor holds is taken now, as it is when sent.
  local ok, err = pcall(require("gopi.context").expand, text, function(full)
    item.text = full
    flush()
  end)
  if not ok and not item.text then
    -- Whatever went wrong, the message is not lost: it goes as typed.
    vim.notify("gopi: context: " .. tostring(err), vim.log.levels.WARN)
    item.text = text
    flush()
  end
end

--- :GopiImage [path]: attaches the image at path, or the clipboard's, to
--- the next message; :GopiImage! drops the attached ones.
function M.image(path, bang)
  local c = chat.current()
  if bang then
    c:detach()
    return c:note("the attached images were dropped")
  end
  local image = require("gopi.image")
  local attach = function(img, err)
    if not img then
      return c:note(err, vim.log.levels.ERROR)
    end
    if not c:is_open() and not M.open() then
      return
    end
    c:attach(img)
    c:note("attached " .. image.chip(img) .. ": it goes with the next message")
  end
  if path and vim.trim(path) ~= "" then
    image.read(vim.trim(path), attach)
  else
    image.from_clipboard(attach)
  end
end

--- :GopiReview: opens the oldest question gopi waits on.
function M.review()
  return require("gopi.review").open()
end

local function client()
  local c = chat.current()
  if not c:running() and not M.found() then
    return nil
  end
  return c:ensure()
end

local function fail(err)
  if err then
    chat.current():note(type(err) == "table" and (err.message or vim.inspect(err)) or tostring(err), vim.log.levels.ERROR)
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

local function refresh()
  chat.current():refresh_status()
end

local function reload()
  chat.current():load_history()
  refresh()
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
        local p = chat.current():prompt_buffer()
        if p then
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
      ask("set_session_name", { name = n }, refresh)
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
      ask("set_model", { provider = m.provider, modelId = m.id }, refresh)
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
    ask("set_thinking_level", { level = level }, refresh)
  else
    ask("cycle_thinking_level", {}, refresh)
  end
end

function M.compact(instructions)
  chat.current():note("compacting…")
  ask("compact", (instructions and instructions ~= "") and { customInstructions = instructions } or {}, refresh)
end

--- :GopiExport [path]: the session as HTML, where asked (a temporary
--- file by default, never the project unasked); then opened.
function M.export(path)
  local go = function(p)
    if not p or vim.trim(p) == "" then
      return
    end
    p = vim.fn.fnamemodify(vim.fn.expand(vim.trim(p)), ":p")
    vim.fn.mkdir(vim.fn.fnamemodify(p, ":h"), "p")
    ask("export_html", { outputPath = p }, function(r)
      local out = (r and r.path) or p
      chat.current():note("exported to " .. out)
      if vim.ui.open then
        pcall(vim.ui.open, out)
      end
    end)
  end
  if path and path ~= "" then
    return go(path)
  end
  local file = chat.current():session_file()
  local name = file and vim.fn.fnamemodify(file, ":t:r") or os.date("%Y%m%d-%H%M%S")
  local tmp = (vim.uv or vim.loop).os_tmpdir() or "/tmp"
  vim.ui.input({ prompt = "gopi: export to ", default = tmp .. "/gopi-session-" .. name .. ".html", completion = "file" }, go)
end

--- :GopiRewind [undo]: back to one of gopi's checkpoints (gopi.rewind);
--- with "undo", the last rewind taken back.
function M.rewind(arg)
  local rewind = require("gopi.rewind")
  if arg and vim.trim(arg) == "undo" then
    if client() then
      rewind.undo()
    end
  elseif arg and vim.trim(arg) ~= "" then
    fail("GopiRewind takes no argument or undo, not " .. arg)
  else
    rewind.open(ask)
  end
end

--- :GopiMcp: the session's MCP servers and their state; the one picked shows its tools or its error.
function M.mcp()
  ask("get_mcp_servers", {}, function(res)
    require("gopi.mcp").show((res or {}).servers)
  end)
end

--- :GopiLog: the plugin's log and gopi's stderr (Neovim's LSP log).
function M.log()
  vim.cmd("tabnew")
  local b = vim.api.nvim_get_current_buf()
  vim.bo[b].buftype = "nofile"
  vim.bo[b].bufhidden = "wipe"
  local lines = vim.list_extend({ "# gopi.nvim", "" }, chat.current():log_lines())
  table.insert(lines, "")
  table.insert(lines, "gopi's stderr goes to Neovim's LSP log: " .. vim.lsp.get_log_path())
  vim.api.nvim_buf_set_lines(b, 0, -1, false, lines)
end

function M.restart()
  if M.found() then
    return chat.current():restart()
  end
end

--- The changed files' content before the last run, from the run's tool
--- calls in the session: edits are undone on the current text, in reverse
--- order; a file the run wrote whole was new, or is taken from git's HEAD.
local function before_run(messages, paths)
  local start = 1
  for i, m in ipairs(messages) do
    if m.role == "user" then
      start = i
    end
  end
  local calls, failed = {}, {}
  for i = start, #messages do
    local m = messages[i]
    if m.role == "assistant" then
      for _, c in ipairs(m.content or {}) do
        if c.type == "toolCall" and (c.name == "edit" or c.name == "write") then
          table.insert(calls, c)
        end
      end
    elseif m.role == "toolResult" and m.isError then
      failed[m.toolCallId or ""] = true
    end
  end
  local out = {}
  for path in pairs(paths) do
    local abs = vim.fn.fnamemodify(path, ":p")
    local text = vim.fn.filereadable(abs) == 1 and table.concat(vim.fn.readfile(abs, "b"), "\n") or ""
    for i = #calls, 1, -1 do
      local c, a = calls[i], calls[i].arguments or {}
      if not failed[c.id or ""] and a.path and vim.fn.fnamemodify(a.path, ":p") == abs then
        if c.name == "write" then
          local git = vim.system({ "git", "show", "HEAD:./" .. vim.fn.fnamemodify(abs, ":t") }, { cwd = vim.fn.fnamemodify(abs, ":h"), text = true }):wait(5000)
          text = git.code == 0 and git.stdout or ""
        else
          local edits = a.edits or { { oldText = a.oldText, newText = a.newText } }
          for k = #edits, 1, -1 do
            local e = edits[k]
            if type(e.newText) == "string" and type(e.oldText) == "string" then
              local s0, e0 = text:find(e.newText, 1, true)
              if s0 then
                text = text:sub(1, s0 - 1) .. e.oldText .. text:sub(e0 + 1)
              end
            end
          end
        end
      end
    end
    out[path] = text
  end
  return out
end

local function relative(path)
  return vim.fn.fnamemodify(path, ":.")
end

--- The diff of one changed file in a new tab: before the run on the left,
--- the file on the right.
local function show_diff(path, before)
  vim.cmd("tabnew " .. vim.fn.fnameescape(path))
  local win = vim.api.nvim_get_current_win()
  vim.cmd("leftabove vnew")
  local b = vim.api.nvim_get_current_buf()
  vim.bo[b].buftype = "nofile"
  vim.bo[b].bufhidden = "wipe"
  vim.bo[b].swapfile = false
  local lines = vim.split(before, "\n", { plain = true })
  if lines[#lines] == "" and #lines > 1 then
    table.remove(lines)
  end
  vim.api.nvim_buf_set_lines(b, 0, -1, false, lines)
  pcall(vim.api.nvim_buf_set_name, b, "gopi://before/" .. relative(path))
  vim.bo[b].filetype = vim.filetype.match({ filename = path }) or ""
  vim.bo[b].modifiable = false
  vim.cmd("diffthis")
  vim.api.nvim_set_current_win(win)
  vim.cmd("diffthis")
end

--- :GopiChanges [file]: the files the last run changed, in the quickfix
--- list, each at its first changed line; with a file, its diff against its
--- content before the run, in a new tab (:diffsplit style).
function M.changes(file)
  local paths = {}
  for _, path in ipairs(chat.current():changed_files()) do
    paths[path] = true
  end
  if next(paths) == nil then
    chat.current():note("the last run changed no file")
    return
  end
  if file and file ~= "" then
    local want = vim.fn.fnamemodify(vim.fn.expand(file), ":p")
    local found
    for p in pairs(paths) do
      if vim.fn.fnamemodify(p, ":p") == want then
        found = p
      end
    end
    if not found then
      return fail(file .. " was not changed by the last run")
    end
    paths = { [found] = true }
  end
  ask("get_messages", {}, function(res)
    local before = before_run((res or {}).messages or {}, paths)
    if file and file ~= "" then
      local p = next(paths)
      return show_diff(p, before[p])
    end
    local items = {}
    for path, old in pairs(before) do
      local abs = vim.fn.fnamemodify(path, ":p")
      local now = vim.fn.filereadable(abs) == 1 and table.concat(vim.fn.readfile(abs, "b"), "\n") or ""
      local hunks = vim.diff(old, now, { result_type = "indices" }) or {}
      local added, removed = 0, 0
      for _, h in ipairs(hunks) do
        removed, added = removed + h[2], added + h[4]
      end
      local first = hunks[1] and math.max(hunks[1][3], 1) or 1
      table.insert(items, {
        filename = relative(path),
        lnum = first,
        text = string.format("changed by gopi: +%d -%d  (:GopiChanges %s for the diff)", added, removed, relative(path)),
      })
    end
    table.sort(items, function(a, b)
      return a.filename < b.filename
    end)
    vim.fn.setqflist({}, " ", { title = "gopi: changed files", items = items })
    vim.cmd("copen")
  end)
end

--- :GopiChanges's argument: the files the last run changed.
function M.changed_files(lead)
  local out = {}
  for _, path in ipairs(chat.current():changed_files()) do
    local rel = relative(path)
    if vim.startswith(rel, lead or "") then
      table.insert(out, rel)
    end
  end
  table.sort(out)
  return out
end

--- :[range]GopiAdd [text]: `@path` (or `@path#Lfrom-to` for a range) into
--- the prompt. When sent, the file's lines go along (gopi.context): the
--- buffer's, unsaved changes included.
function M.add(line1, line2, text)
  local path = vim.fn.expand("%:.")
  if path == "" then
    return fail("this buffer has no file")
  end
  local ref = "@" .. path
  if line1 then
    ref = line1 == line2 and string.format("@%s#L%d", path, line1) or string.format("@%s#L%d-%d", path, line1, line2)
  end
  if not chat.current():is_open() then
    M.open()
  end
  local p = chat.current():prompt_buffer()
  if not p then
    return
  end
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
