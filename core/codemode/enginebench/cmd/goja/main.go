// Command goja is the base program with goja linked in.
package main

import (
	"fmt"
	"os"

	"github.com/dop251/goja"
)

func main() {
	v, err := goja.New().RunString(fmt.Sprint(len(os.Args), "+1"))
	if err != nil {
		panic(err)
	}
	fmt.Println(v.String())
}
