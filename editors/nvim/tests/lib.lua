-- What both test files share: running a test, assertions, and the closing
-- "N passed, N failed" line CI reads.
local M = { passed = 0, failed = 0 }

--- Runs fn(...) as the test name and reports it.
function M.run(name, fn, ...)
  local ok, err = xpcall(fn, debug.traceback, ...)
  if ok then
    M.passed = M.passed + 1
    io.stdout:write("ok - " .. name .. "\n")
  else
    M.failed = M.failed + 1
    io.stdout:write("not ok - " .. name .. "\n    " .. tostring(err):gsub("\n", "\n    ") .. "\n")
  end
end

function M.eq(want, got, what)
  if not vim.deep_equal(want, got) then
    error(string.format("%s: want %s, got %s", what or "value", vim.inspect(want), vim.inspect(got)), 2)
  end
end

function M.ok(cond, what)
  if not cond then
    error(what or "assertion failed", 2)
  end
end

--- Prints the closing line and exits 1 on any failure.
function M.finish()
  io.stdout:write(string.format("%d passed, %d failed\n", M.passed, M.failed))
  os.exit(M.failed == 0 and 0 or 1)
end

return M
