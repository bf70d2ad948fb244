module svc.dev/argocd-lua

go 1.21

require github.com/yuin/gopher-lua v1.1.1
