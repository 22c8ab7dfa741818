-- Context that carries content. Each `@path` (or `@path#L3-9`, what
-- :GopiAdd puts in the prompt) in a message is followed, when sent, by the
-- file's text, so the model sees it: the buffer's lines when the file is
-- loaded (unsaved changes included), else the file on disk. `#buffer`,
-- `#selection`, `#diagnostics`, `#quickfix` and `#diff` do the same for what
-- the editor holds (see M.mentions). pi's prompt takes text (and images)
-- only, so the content goes as tagged, fenced blocks after the message; the
-- chat shows each one as a chip, `[@main.go (42 lines)]`, `[#quickfix 3]`.
local M = {}

-- Files larger than this are not attached (their path still goes).
M.max_bytes = 512 * 1024

--- The file's lines: a loaded buffer's (unsaved changes included), else the
--- file's on disk; nil when it is neither, or looks binary.
function M.lines(path)
  local abs = vim.fn.fnamemodify(path, ":p")
  local b = vim.fn.bufnr(abs)
  if b > 0 and vim.api.nvim_buf_is_loaded(b) and vim.bo[b].buftype == "" then
    return vim.api.nvim_buf_get_lines(b, 0, -1, false)
  end
  if vim.fn.filereadable(abs) == 0 or vim.fn.getfsize(abs) > M.max_bytes then
    return nil
  end
  local ok, lines = pcall(vim.fn.readfile, abs)
  if not ok then
    return nil
  end
  for _, l in ipairs(lines) do
    if l:find("\n", 1, true) then -- readfile turns NUL bytes into newlines
      return nil
    end
  end
  return lines
end

--- A fence longer than any run of backticks in lines.
local function fence(lines)
  local n = 3
  for _, l in ipairs(lines) do
    for run in l:gmatch("`+") do
      n = math.max(n, #run + 1)
    end
  end
  return string.rep("`", n)
end

--- Each `@word` of text as take(ref) accepts it: take gets the word, then
--- (when it returns nil) the word with trailing punctuation dropped a
--- character at a time, since that belongs to the sentence, not the path.
--- The values take returns, once per ref, in order.
function M.at_refs(text, take)
  local out, seen = {}, {}
  for word in (" " .. (text or "")):gmatch("%s@(%S+)") do
    local ref = word
    while ref ~= "" do
      local v = take(ref)
      if v ~= nil then
        if not seen[ref] then
          seen[ref] = true
          table.insert(out, v)
        end
        break
      end
      local shorter = ref:gsub("[%.,;:!%?%)%]}'\"]$", "")
      if shorter == ref then
        break
      end
      ref = shorter
    end
  end
  return out
end

--- The references in text: { ref = "src/a.go#L1-3", path, from, to }.
function M.refs(text)
  return M.at_refs(text, function(ref)
    local path, a, b = ref:match("^(.-)#L(%d+)%-(%d+)$")
    if not path then
      path, a = ref:match("^(.-)#L(%d+)$")
      b = a
    end
    path = path or ref
    if vim.fn.filereadable(vim.fn.fnamemodify(path, ":p")) == 1 or vim.fn.bufloaded(vim.fn.fnamemodify(path, ":p")) == 1 then
      return { ref = ref, path = path, from = tonumber(a), to = tonumber(b) }
    end
  end)
end

-- `#name` mentions: what the editor holds, sent as content.
-- #buffer       the current buffer's text (the last file buffer entered
--               outside gopi's windows), unsaved changes included
-- #selection    that buffer's last visual selection, with its range
-- #diagnostics  that buffer's diagnostics; #diagnostics:all everyone's
-- #quickfix     the quickfix list's entries with their text
-- #diff         `git diff HEAD` of the working tree (run in the background)
M.mentions = {
  { name = "buffer", description = "the current buffer's text, unsaved changes included" },
  { name = "selection", description = "the last visual selection, with its range" },
  { name = "diagnostics", description = "the current buffer's diagnostics" },
  { name = "diagnostics:all", description = "the diagnostics of all buffers" },
  { name = "quickfix", description = "the quickfix list's entries" },
  { name = "diff", description = "git diff of the working tree" },
}

-- A #diff longer than this is cut (at a line's end) and marked so.
M.max_diff_bytes = 100 * 1024
-- How long git diff may take before it is given up (ms).
M.diff_timeout = 10000

local known = {}
for _, m in ipairs(M.mentions) do
  known[m.name] = true
end

--- The `#name` mentions in text, in order, each once.
function M.tags(text)
  local out, seen = {}, {}
  for word in (" " .. text):gmatch("%s#([%w:]+)") do
    word = word:gsub(":+$", "")
    if known[word] and not seen[word] then
      seen[word] = true
      table.insert(out, word)
    end
  end
  return out
end

local function is_file_buffer(b)
  return b
    and b > 0
    and vim.api.nvim_buf_is_valid(b)
    and vim.api.nvim_buf_is_loaded(b)
    and vim.bo[b].buftype == ""
    and not vim.api.nvim_buf_get_name(b):match("^gopi://")
end

--- The buffer #buffer and its kin mean: the last file buffer entered
--- (plugin/gopi.lua keeps it), else the current window's, the previous
--- window's, or the first one of the tab page that shows a file.
function M.buffer()
  local last = vim.g.gopi_last_buffer
  if is_file_buffer(last) then
    return last
  end
  local cur = vim.api.nvim_get_current_buf()
  if is_file_buffer(cur) then
    return cur
  end
  local prev = vim.fn.win_getid(vim.fn.winnr("#"))
  if prev ~= 0 and is_file_buffer(vim.api.nvim_win_get_buf(prev)) then
    return vim.api.nvim_win_get_buf(prev)
  end
  for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    local b = vim.api.nvim_win_get_buf(w)
    if is_file_buffer(b) then
      return b
    end
  end
end

local function bufpath(b)
  local name = vim.api.nvim_buf_get_name(b)
  return name == "" and "[No Name]" or vim.fn.fnamemodify(name, ":.")
end

local function attr(v)
  return (tostring(v):gsub("&", "&amp;"):gsub('"', "&quot;"):gsub("\n", " "))
end

--- A block: <tag k="v"...>, the lines fenced, </tag>.
local function block(tag, attrs, lang, lines)
  local a = {}
  for _, kv in ipairs(attrs) do
    table.insert(a, string.format(' %s="%s"', kv[1], attr(kv[2])))
  end
  local f = fence(lines)
  local out = { "<" .. tag .. table.concat(a) .. ">", f .. (lang or "") }
  vim.list_extend(out, lines)
  table.insert(out, f)
  table.insert(out, "</" .. tag .. ">")
  return out
end

local severities = { "ERROR", "WARN", "INFO", "HINT" }

local builders = {}

function builders.buffer(b)
  local lines = vim.api.nvim_buf_get_lines(b, 0, -1, false)
  local attrs = { { "path", bufpath(b) } }
  if vim.bo[b].modified then
    table.insert(attrs, { "modified", "true" })
  end
  return block("buffer", attrs, vim.bo[b].filetype, lines)
end

function builders.selection(b)
  local s = vim.api.nvim_buf_get_mark(b, "<")
  local e = vim.api.nvim_buf_get_mark(b, ">")
  if s[1] == 0 or e[1] == 0 then
    return nil
  end
  local mode = vim.fn.visualmode()
  local ok, lines = pcall(vim.fn.getregion, { b, s[1], s[2] + 1, 0 }, { b, e[1], math.min(e[2], 2147483646) + 1, 0 }, { type = mode ~= "" and mode or "v" })
  if not ok then
    lines = vim.api.nvim_buf_get_lines(b, s[1] - 1, e[1], false)
  end
  return block("selection", { { "path", bufpath(b) }, { "lines", s[1] .. "-" .. e[1] } }, vim.bo[b].filetype, lines)
end

local function diagnostics(b, all)
  local ds
  if all then
    ds = vim.diagnostic.get()
  else
    ds = vim.diagnostic.get(b)
  end
  table.sort(ds, function(x, y)
    if x.bufnr ~= y.bufnr then
      return bufpath(x.bufnr) < bufpath(y.bufnr)
    end
    return x.lnum < y.lnum or (x.lnum == y.lnum and x.col < y.col)
  end)
  local lines = {}
  for _, d in ipairs(ds) do
    local msg = (d.message or ""):gsub("\n", "\n  ")
    local src = d.source and (" [" .. d.source .. (d.code and (" " .. tostring(d.code)) or "") .. "]") or ""
    local l = string.format("%s:%d:%d: %s: %s%s", bufpath(d.bufnr), d.lnum + 1, d.col + 1, severities[d.severity] or "?", msg, src)
    vim.list_extend(lines, vim.split(l, "\n", { plain = true }))
  end
  local attrs = all and {} or { { "path", bufpath(b) } }
  table.insert(attrs, { "count", #ds })
  return block("diagnostics", attrs, "", lines)
end

function builders.diagnostics(b)
  return diagnostics(b, false)
end

builders["diagnostics:all"] = function(b)
  return diagnostics(b, true)
end

function builders.quickfix()
  local qf = vim.fn.getqflist({ items = 1, title = 1 })
  local lines = {}
  for _, it in ipairs(qf.items or {}) do
    local text = (it.text or ""):gsub("\n", " ")
    if it.valid == 1 and it.bufnr > 0 then
      local where = bufpath(it.bufnr)
      if it.lnum > 0 then
        where = where .. ":" .. it.lnum .. (it.col > 0 and (":" .. it.col) or "")
      end
      local kind = (it.type or "") ~= "" and (it.type .. ": ") or ""
      table.insert(lines, where .. ": " .. kind .. text)
    else
      table.insert(lines, text)
    end
  end
  return block("quickfix", { { "title", qf.title or "" }, { "count", #(qf.items or {}) } }, "", lines)
end

--- Runs git diff in cwd in the background; done(lines, err) on the main loop.
function M.git_diff(cwd, done)
  local function run(args, fallback)
    local chunks, size, cut, proc = {}, 0, false, nil
    local ok, started = pcall(vim.system, args, {
      cwd = cwd,
      text = true,
      timeout = M.diff_timeout,
      stdout = function(_, data)
        if data and not cut then
          table.insert(chunks, data)
          size = size + #data
          if size > M.max_diff_bytes then
            cut = true
            if proc then
              pcall(proc.kill, proc, 15)
            end
          end
        end
      end,
    }, function(res)
      vim.schedule(function()
        if not cut and res.code ~= 0 then
          if fallback then
            return fallback()
          end
          return done(nil, vim.trim(res.stderr or "") ~= "" and vim.trim(res.stderr) or ("git diff: exit " .. res.code))
        end
        local out = table.concat(chunks)
        local note
        if cut or #out > M.max_diff_bytes then
          local keep = out:sub(1, M.max_diff_bytes)
          out = keep:match("^(.*)\n") or keep
          note = string.format("[the diff was cut here: over %d KiB]", math.floor(M.max_diff_bytes / 1024))
        end
        local lines = out == "" and {} or vim.split(out:gsub("\n$", ""), "\n", { plain = true })
        if note then
          table.insert(lines, note)
        end
        done(lines, nil, note ~= nil)
      end)
    end)
    if not ok then
      vim.schedule(function()
        done(nil, tostring(started))
      end)
      return
    end
    proc = started
  end
  local base = { "git", "--no-pager", "diff", "--no-color", "--no-ext-diff" }
  -- HEAD: staged and unstaged changes; a repository without commits has
  -- no HEAD, then what is not staged.
  run(vim.list_extend(vim.deepcopy(base), { "HEAD" }), function()
    run(base)
  end)
end

local function diff_block(lines, cut)
  local files = 0
  for _, l in ipairs(lines) do
    if l:match("^diff %-%-git ") then
      files = files + 1
    end
  end
  local attrs = { { "files", files } }
  if cut then
    table.insert(attrs, { "truncated", "true" })
  end
  return block("diff", attrs, "diff", lines)
end

--- text with the content of each file it references (@path) and each
--- mention (#buffer, ...) appended. done(text) gets it, at once or, with
--- #diff, when git diff is through; without done, it is returned (waiting
--- for git diff: for tests).
function M.expand(text, done)
  local blocks = {}
  for _, r in ipairs(M.refs(text)) do
    local lines = M.lines(r.path)
    if lines then
      local first = 1
      if r.from then
        first = math.max(1, math.min(r.from, #lines))
        lines = vim.list_slice(lines, first, math.max(first, math.min(r.to, #lines)))
      end
      local ft = vim.filetype.match({ filename = r.path }) or ""
      local attrs = { { "path", r.path } }
      if r.from then
        table.insert(attrs, { "lines", string.format("%d-%d", first, first + #lines - 1) })
      end
      table.insert(blocks, block("file", attrs, ft, lines))
    end
  end
  -- What the editor holds is taken now, as it is when sent; the diff slot
  -- is filled when git is through.
  local diff_slot
  local b = M.buffer()
  for _, name in ipairs(M.tags(text)) do
    if name == "diff" then
      table.insert(blocks, false)
      diff_slot = #blocks
    elseif name == "quickfix" or b then
      -- A mention that fails is left out, said so; the message still goes.
      local ok, got = pcall(builders[name], b)
      if not ok then
        vim.notify("gopi: #" .. name .. ": " .. tostring(got), vim.log.levels.WARN)
      elseif got then
        table.insert(blocks, got)
      end
    end
  end
  local result
  local function finish()
    local out = {}
    for _, bl in ipairs(blocks) do
      if bl then
        vim.list_extend(out, bl)
      end
    end
    result = #out == 0 and text or (text .. "\n\n" .. table.concat(out, "\n"))
    if done then
      done(result)
    end
  end
  if not diff_slot then
    finish()
    return result
  end
  M.git_diff(vim.fn.getcwd(), function(lines, err, cut)
    if lines then
      blocks[diff_slot] = diff_block(lines, cut)
    else
      vim.notify("gopi: #diff: " .. (err or "git diff failed"), vim.log.levels.WARN)
    end
    finish()
  end)
  if not done then
    vim.wait(M.diff_timeout + 1000, function()
      return result ~= nil
    end, 10)
  end
  return result
end

local tags = { file = true, buffer = true, selection = true, diagnostics = true, quickfix = true, diff = true }

local function unattr(v)
  return (v:gsub("&quot;", '"'):gsub("&amp;", "&"))
end

local function plural(n, what)
  return string.format("%d %s%s", n, what, n == 1 and "" or "s")
end

--- The chip a block shows as.
local function chip(tag, a, n)
  if tag == "file" then
    local from, to = (a.lines or ""):match("(%d+)%-(%d+)")
    local ref = from and (from == to and string.format("@%s#L%s", a.path, from) or string.format("@%s#L%s-%s", a.path, from, to)) or "@" .. a.path
    return string.format("[%s (%s)]", ref, plural(n, "line"))
  elseif tag == "buffer" then
    return string.format("[#buffer %s (%s%s)]", a.path, plural(n, "line"), a.modified and ", unsaved" or "")
  elseif tag == "selection" then
    local from, to = (a.lines or ""):match("(%d+)%-(%d+)")
    local where = from and (from == to and ("#L" .. from) or ("#L" .. from .. "-" .. to)) or ""
    return string.format("[#selection %s%s (%s)]", a.path, where, plural(n, "line"))
  elseif tag == "diagnostics" then
    return string.format("[#diagnostics%s %s]", a.path and "" or ":all", a.count or n)
  elseif tag == "quickfix" then
    return string.format("[#quickfix %s]", a.count or n)
  elseif tag == "diff" then
    local files = tonumber(a.files) or 0
    if n == 0 then
      return "[#diff no changes]"
    end
    return string.format("[#diff %s (%s%s)]", plural(files, "file"), plural(n, "line"), a.truncated and ", cut" or "")
  end
end

--- The message as the chat shows it: each attached block a one-line chip.
function M.compact(text)
  if type(text) ~= "string" or not text:find("\n<%l+[ >]") then
    return text
  end
  local lines = vim.split(text, "\n", { plain = true })
  local out, i = {}, 1
  while i <= #lines do
    local tag, rest = lines[i]:match("^<(%l+)(.-)>$")
    local f = tag and tags[tag] and lines[i + 1] and lines[i + 1]:match("^(```+)")
    local stop
    if f then
      for j = i + 2, #lines do
        if lines[j] == f and lines[j + 1] == "</" .. tag .. ">" then
          stop = j + 1
          break
        end
      end
    end
    if stop then
      local a = {}
      for k, v in rest:gmatch('(%w+)="(.-)"') do
        a[k] = unattr(v)
      end
      table.insert(out, chip(tag, a, stop - i - 3))
      i = stop + 1
    else
      table.insert(out, lines[i])
      i = i + 1
    end
  end
  -- The blank line between the message and its first chip goes.
  local s = table.concat(out, "\n"):gsub("\n\n(%[[@#][^\n]*%])", "\n%1", 1)
  return s
end

return M
