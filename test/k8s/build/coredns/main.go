// A CoreDNS for the test node with only the plugins it needs: it answers the cluster domain from the
// Kubernetes API and nothing else (no forwarding, so no query ever leaves the machine); `bind` keeps it off
// every interface but the test node's bridge.
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/ready"
)

func init() {
	// the order the plugins run in, as in CoreDNS's plugin.cfg
	dnsserver.Directives = []string{"bind", "ready", "health", "errors", "log", "kubernetes"}
}

func main() { coremain.Run() }
