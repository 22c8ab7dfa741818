-- Options of require("gopi").setup({...}), with their defaults. See :help gopi-config.
local M = {}

M.defaults = {
  -- The gopi binary; nil: `gopi` on PATH, else bin/gopi of the checkout the plugin is in.
  cmd = nil,
  -- Extra arguments after `--mode jsonrpc`.
  args = {},
  -- Extra environment for gopi (API keys, PI_CODING_AGENT_DIR, ...).
  env = {},
  -- initializationOptions: what to start with (nil: gopi's defaults).
  provider = nil,
  model = nil,
  thinking_level = nil,
  -- "off", "escapes" (ask only to run a command the sandbox stopped once outside),
  -- "writes" (edit, write and bash wait for :GopiReview) or "all".
  approval = "writes",
  -- The sandbox the model's commands run in (`--sandbox`; Linux):
  -- "off", "read-only" or "workspace-write"; nil: gopi decides (its
  -- settings.json, else its default). See :help gopi-sandbox.
  sandbox = nil,
  -- How an edit or write is reviewed: "tab" (a diff tab; accepting takes
  -- the whole change) or "inline" (in the file's own buffer, hunk by hunk).
  -- See :help gopi-review-inline.
  review = "tab",
  -- Resume this directory's last session on the first :Gopi.
  resume = false,
  -- Streamed deltas arrive merged over this many ms (0: one notification
  -- each). Neovim parses each JSON-RPC message in Lua; fewer, longer ones
  -- keep the editor responsive during long replies.
  coalesce_ms = 16,
  chat = {
    -- "right", "left" (a vertical split), "below" or "float".
    layout = "right",
    width = 0.4, -- of the editor, for right/left/float
    height = 0.4, -- for below/float
    prompt_height = 5,
  },
  keys = {
    -- In the prompt window.
    send = { n = "<CR>", i = "<C-s>" },
    follow_up = { n = "<M-CR>", i = "<M-CR>" },
    abort = { n = "<C-c>", i = "<C-c>" },
    -- In the chat and the prompt (normal mode): open the question gopi
    -- waits on (:GopiReview).
    review = "gR",
    -- In the chat, the prompt and a review (normal mode): list the keys.
    help = "?",
    -- In a review (diff) tab; inline, accept and reject act on the hunk
    -- under the cursor.
    accept = "ga",
    reject = "gr",
    allow_always = "gA",
    -- In an inline review.
    accept_all = "gY",
    reject_all = "gX",
    next_hunk = "]x",
    prev_hunk = "[x",
    -- In :GopiRewind's preview: ask what to restore again; close it.
    rewind_restore = "<CR>",
    rewind_close = "q",
  },
}

M.options = vim.deepcopy(M.defaults)

--- The values of the sandbox option, as gopi's `--sandbox` takes them.
M.sandbox_modes = { "off", "read-only", "workspace-write" }

--- Whether v is a sandbox option setup() takes: nil (gopi decides) or one of the modes.
function M.valid_sandbox(v)
  return v == nil or vim.tbl_contains(M.sandbox_modes, v)
end

--- Checks the options whose wrong value would start gopi other than asked:
--- an error that names the option and what it takes, and nothing changes.
local function check(opts)
  vim.validate({
    sandbox = { opts.sandbox, M.valid_sandbox, 'nil (gopi decides), "off", "read-only" or "workspace-write"' },
  })
end

function M.setup(opts)
  opts = opts or {}
  check(opts)
  M.options = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), opts)
  return M.options
end

return M
