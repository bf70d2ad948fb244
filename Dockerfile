# svc and svc-operator images. The build stage compiles the TypeScript; the runtime stages hold only the
# production dependencies, the compiled code, the launchers and the .proto files of the wire contract (server/wire).
#   docker build --build-arg SVC_VERSION=3.4.34 -t svc:v3.4.34 .              member image, one per release
#   docker build --target operator -t svc-operator:v0.1.0 .                    operator image (chart appVersion)
# Tags are always the full release: v<major>.<minor>.<patch> (latest and v<major>.<minor> are deprecated).
# NODE_IMAGE is the runtime base and BUILD_IMAGE the build stage's (it needs npm); test/k8s/images/build-images.sh
# passes bases it makes from Debian packages. NPM_CONFIG_REGISTRY and NODE_EXTRA_CA_CERTS reach npm ci only.
ARG NODE_IMAGE=node:20-bookworm-slim
ARG BUILD_IMAGE=node:20-bookworm-slim

FROM ${BUILD_IMAGE} AS build
ARG NPM_CONFIG_REGISTRY=https://registry.npmjs.org/
ARG NODE_EXTRA_CA_CERTS=
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
# only what the images run: tsc compiles what the include globs find, and the tests are not shipped
COPY server ./server
COPY operator ./operator
# the dependencies' type declarations, source maps and docs are not needed at run time (about 50 MB)
RUN npm run build && npm prune --omit=dev \
 && find node_modules -type f \( -name '*.ts' -o -name '*.map' -o -name '*.md' \) -delete

# Everything both images hold; not tagged itself.
FROM ${NODE_IMAGE} AS app
ENV NODE_ENV=production
WORKDIR /opt/svc
COPY --from=build /src/package.json ./package.json
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/dist/server ./dist/server
COPY --from=build /src/dist/operator ./dist/operator
COPY server/wire/proto ./server/wire/proto
COPY bin ./bin
# (--auto-tls / --peer-auto-tls make their certificates in-process: the image needs no openssl command.)
RUN ln -s /opt/svc/bin/svc /usr/local/bin/svc \
 && ln -s /opt/svc/bin/svcctl /usr/local/bin/svcctl \
 && ln -s /opt/svc/bin/svc-operator /usr/local/bin/svc-operator \
 && mkdir -p /var/lib/svc && chown 65532:65532 /var/lib/svc
# numeric, so the kubelet can check runAsNonRoot (Pod Security "restricted")
USER 65532:65532

# The operator image: svc-operator:v<chart appVersion>; backup and restore Jobs run it too (svc-operator backup|restore).
FROM app AS operator
ENTRYPOINT ["svc-operator"]

# The member image (the default target): svc:v<release>, the release svc behaves as in SVC_VERSION.
FROM app AS svc
ARG SVC_VERSION=3.5.21
ENV SVC_VERSION=${SVC_VERSION}
USER 65532:65532
# Client port (gRPC + HTTP) and peer port.
EXPOSE 2379 2380
VOLUME ["/var/lib/svc"]
ENTRYPOINT ["svc"]
