// lua-health runs an Argo CD resource health script the way Argo CD does (gopher-lua, the object as the global
// `obj`, the script returns a table with status and message) and prints that table as JSON. Used by
// test/integration/operator/argocd-health.test.ts to check docs/argocd/svc.dev_SvcCluster.lua.
//
//	lua-health <script.lua> <object.json>
package main

import (
	"encoding/json"
	"fmt"
	"os"

	lua "github.com/yuin/gopher-lua"
)

// toLua converts decoded JSON to Lua values as Argo CD does (objects and arrays become tables, arrays 1-based).
func toLua(L *lua.LState, v interface{}) lua.LValue {
	switch t := v.(type) {
	case nil:
		return lua.LNil
	case bool:
		return lua.LBool(t)
	case float64:
		return lua.LNumber(t)
	case string:
		return lua.LString(t)
	case []interface{}:
		tbl := L.NewTable()
		for _, e := range t {
			tbl.Append(toLua(L, e))
		}
		return tbl
	case map[string]interface{}:
		tbl := L.NewTable()
		for k, e := range t {
			tbl.RawSetString(k, toLua(L, e))
		}
		return tbl
	}
	return lua.LNil
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: lua-health <script.lua> <object.json>")
		os.Exit(2)
	}
	script, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	raw, err := os.ReadFile(os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var obj interface{}
	if err := json.Unmarshal(raw, &obj); err != nil {
		fmt.Fprintln(os.Stderr, "object:", err)
		os.Exit(1)
	}
	// Argo CD opens only the safe libraries
	L := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer L.Close()
	for _, lib := range []struct {
		name string
		fn   lua.LGFunction
	}{{lua.BaseLibName, lua.OpenBase}, {lua.TabLibName, lua.OpenTable}, {lua.StringLibName, lua.OpenString}, {lua.MathLibName, lua.OpenMath}} {
		L.Push(L.NewFunction(lib.fn))
		L.Push(lua.LString(lib.name))
		L.Call(1, 0)
	}
	L.SetGlobal("obj", toLua(L, obj))
	if err := L.DoString(string(script)); err != nil {
		fmt.Fprintln(os.Stderr, "script:", err)
		os.Exit(1)
	}
	ret, ok := L.Get(-1).(*lua.LTable)
	if !ok {
		fmt.Fprintln(os.Stderr, "script: did not return a table")
		os.Exit(1)
	}
	out := map[string]string{}
	ret.ForEach(func(k, v lua.LValue) { out[k.String()] = v.String() })
	b, _ := json.Marshal(out)
	fmt.Println(string(b))
}
