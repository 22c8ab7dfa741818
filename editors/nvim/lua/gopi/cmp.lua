-- Completion sources for the prompt window: nvim-cmp (`{ name = "gopi" }`)
-- and blink.cmp (module "gopi.blink"). Both offer what 'completefunc' does:
-- `/` from gopi's commands, `@` for files, `#` for the editor's context
-- (#buffer, #diff, ...). See :help gopi-completion.
local complete = require("gopi.complete")

local function in_prompt(buf)
  local p = require("gopi.chat").current():prompt_buffer()
  return p ~= nil and buf == p
end

-- LSP's CompletionItemKind. Commands are Keywords, not Functions: for a
-- Function blink.cmp (and nvim-autopairs under nvim-cmp) would add "()".
local Kind = { Keyword = 14, File = 17 }

--- LSP completion items for before, the text left of the cursor on line row
--- (0-based). Each one's edit replaces what was typed from its `/` or `@`
--- on: left to guess, blink.cmp would replace only the last word ("sess" of
--- "@src/sess"), which gopi's files need not start with.
local function items(before, row)
  local out = {}
  local found, start = complete.items(before)
  local range = { start = { line = row, character = start }, ["end"] = { line = row, character = #before } }
  for _, it in ipairs(found) do
    table.insert(out, {
      label = it.word,
      filterText = it.word,
      textEdit = { newText = it.word, range = range },
      kind = it.word:sub(1, 1) == "@" and Kind.File or Kind.Keyword,
      detail = it.menu,
    })
  end
  return out
end

local cmp_source = {}
cmp_source.__index = cmp_source

function cmp_source.new()
  return setmetatable({}, cmp_source)
end

function cmp_source:is_available()
  return in_prompt(vim.api.nvim_get_current_buf())
end

function cmp_source:get_trigger_characters()
  return { "/", "@", "#" }
end

function cmp_source:get_keyword_pattern()
  return [[\%([/@#]\S*\)]]
end

-- The edits' columns are bytes.
function cmp_source:get_position_encoding_kind()
  return "utf-8"
end

function cmp_source:complete(params, callback)
  local ctx = params.context
  callback({ items = items(ctx.cursor_before_line, ctx.cursor.row - 1), isIncomplete = true })
end

--- blink.cmp source: `sources.providers.gopi = { module = "gopi.blink" }`.
local blink = {}
blink.__index = blink

function blink.new()
  return setmetatable({}, blink)
end

function blink:enabled()
  return in_prompt(vim.api.nvim_get_current_buf())
end

function blink:get_trigger_characters()
  return { "/", "@", "#" }
end

-- ctx.cursor is (1-based row, 0-based byte column), as nvim_win_get_cursor's.
function blink:get_completions(ctx, callback)
  local row, col = ctx.cursor[1], ctx.cursor[2]
  callback({ items = items(ctx.line:sub(1, col), row - 1), is_incomplete_forward = true, is_incomplete_backward = true })
  return function() end
end

local M = { cmp = cmp_source, blink = blink, items = items }

local registered = false

--- Registers the nvim-cmp source, once, when nvim-cmp can be loaded: by
--- setup(), and again when the prompt is made, for an nvim-cmp loaded later.
function M.register()
  if registered then
    return true
  end
  local ok, cmp = pcall(require, "cmp")
  if ok and type(cmp) == "table" and cmp.register_source then
    cmp.register_source("gopi", cmp_source.new())
    registered = true
  end
  return registered
end

return M
