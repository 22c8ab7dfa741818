-- Context that carries content: each `@path` (or `@path#L3-9`, what
-- :GopiAdd puts in the prompt) in a message is followed, when sent, by the
-- file's text, so the model sees it: the buffer's lines when the file is
-- loaded (unsaved changes included), else the file on disk. pi's prompt takes
-- text (and images) only, so the content goes as fenced blocks after the
-- message; the chat shows each one as a chip, `@main.go (42 lines)`.
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

--- The references in text: { ref = "src/a.go#L1-3", path, from, to }.
function M.refs(text)
  local out, seen = {}, {}
  for word in (" " .. text):gmatch("%s@(%S+)") do
    -- Trailing punctuation belongs to the sentence, not the path.
    local ref = word
    while ref ~= "" do
      local path, a, b = ref:match("^(.-)#L(%d+)%-(%d+)$")
      if not path then
        path, a = ref:match("^(.-)#L(%d+)$")
        b = a
      end
      path = path or ref
      if vim.fn.filereadable(vim.fn.fnamemodify(path, ":p")) == 1 or vim.fn.bufloaded(vim.fn.fnamemodify(path, ":p")) == 1 then
        if not seen[ref] then
          seen[ref] = true
          table.insert(out, { ref = ref, path = path, from = tonumber(a), to = tonumber(b) })
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

--- text with the content of each file it references appended.
function M.expand(text)
  local blocks = {}
  for _, r in ipairs(M.refs(text)) do
    local lines = M.lines(r.path)
    if lines then
      local first = 1
      if r.from then
        first = math.max(1, math.min(r.from, #lines))
        lines = vim.list_slice(lines, first, math.max(first, math.min(r.to, #lines)))
      end
      local f = fence(lines)
      local ft = vim.filetype.match({ filename = r.path }) or ""
      local range = r.from and string.format(' lines="%d-%d"', first, first + #lines - 1) or ""
      table.insert(blocks, string.format('<file path="%s"%s>', r.path, range))
      table.insert(blocks, f .. ft)
      vim.list_extend(blocks, lines)
      table.insert(blocks, f)
      table.insert(blocks, "</file>")
    end
  end
  if #blocks == 0 then
    return text
  end
  return text .. "\n\n" .. table.concat(blocks, "\n")
end

--- The message as the chat shows it: each attached file a one-line chip.
function M.compact(text)
  if type(text) ~= "string" or not text:find('\n<file path="', 1, true) then
    return text
  end
  local lines = vim.split(text, "\n", { plain = true })
  local out, i = {}, 1
  while i <= #lines do
    local path, range = lines[i]:match('^<file path="(.-)"(.-)>$')
    local f = path and lines[i + 1] and lines[i + 1]:match("^(```+)")
    local stop
    if f then
      for j = i + 2, #lines do
        if lines[j] == f and lines[j + 1] == "</file>" then
          stop = j + 1
          break
        end
      end
    end
    if stop then
      local n = stop - i - 3
      local from, to = range:match('lines="(%d+)%-(%d+)"')
      local ref = from and (from == to and string.format("@%s#L%s", path, from) or string.format("@%s#L%s-%s", path, from, to)) or "@" .. path
      table.insert(out, string.format("[%s (%d line%s)]", ref, n, n == 1 and "" or "s"))
      i = stop + 1
    else
      table.insert(out, lines[i])
      i = i + 1
    end
  end
  -- The blank line between the message and its first chip goes.
  local s = table.concat(out, "\n"):gsub("\n\n(%[@[^\n]*%])", "\n%1", 1)
  return s
end

return M
