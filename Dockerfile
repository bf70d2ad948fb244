# svc and svc-operator images. One build stage compiles the TypeScript; the runtime stage holds only the
# production dependencies, the compiled code, the launchers and the .proto files the gRPC API loads at start.
#   docker build --build-arg SVC_VERSION=3.4.34 -t svc:v3.4.34 .
# Tags are always the full release: v<major>.<minor>.<patch> (latest and v<major>.<minor> are deprecated).
ARG NODE_IMAGE=node:20-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY server ./server
COPY operator ./operator
COPY test ./test
COPY bench ./bench
RUN npm run build && npm prune --omit=dev

FROM ${NODE_IMAGE} AS runtime
ARG SVC_VERSION=3.5.21
ENV SVC_VERSION=${SVC_VERSION} \
    NODE_ENV=production
WORKDIR /opt/svc
COPY --from=build /src/package.json ./package.json
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/dist/server ./dist/server
COPY --from=build /src/dist/operator ./dist/operator
COPY server/api/proto ./server/api/proto
COPY bin ./bin
# --auto-tls / --peer-auto-tls generate their self-signed certificates with the openssl command.
RUN apt-get update && apt-get install -y --no-install-recommends openssl && rm -rf /var/lib/apt/lists/*
RUN ln -s /opt/svc/bin/svc /usr/local/bin/svc \
 && ln -s /opt/svc/bin/svcctl /usr/local/bin/svcctl \
 && ln -s /opt/svc/bin/svc-operator /usr/local/bin/svc-operator \
 && mkdir -p /var/lib/svc && chown 65532:65532 /var/lib/svc
USER 65532:65532
# Client port (gRPC + HTTP) and peer port.
EXPOSE 2379 2380
VOLUME ["/var/lib/svc"]
ENTRYPOINT ["svc"]
