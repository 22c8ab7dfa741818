// Command quickjs is the base program with QuickJS on wazero linked in.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/gopi-dev/gopi/core/codemode/quickjs"
)

func main() {
	ctx := context.Background()
	e, err := quickjs.NewEngine(ctx, "")
	if err != nil {
		panic(err)
	}
	vm, err := e.New(ctx, quickjs.Config{})
	if err != nil {
		panic(err)
	}
	v, err := vm.Eval(ctx, fmt.Sprint(len(os.Args), "+1"), "main.js", quickjs.EvalGlobal)
	if err != nil {
		panic(err)
	}
	s, _ := vm.String(ctx, v)
	fmt.Println(s)
}
