module svc.dev/pause

go 1.21
