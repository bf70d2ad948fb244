// svc's wire contract: the reference's .proto files (proto/), their one lazy loader (loader.ts) and the typed
// messages generated from them (messages.ts). The server, the client library and the benchmarks all use it;
// importing it reads and parses nothing.
export {
  decodeOptions, protoFiles, ProtoLoadError, wireLoadStats, setProtoDir, protoRoot, wireRoot, messageType,
  lowerCamel, serviceDefinition, serviceNames, serviceDefinitions, loadClients, fileDescriptorProtos,
  type WireLoadStats, type ServiceKey, type ServiceClients,
} from './loader.js';
export {
  SERVICES, type Messages, type MessageName, type MethodInfo, type ServiceName, type UnaryMethod, type RequestOf,
  type ResponseOf, type Encodable, type Int64, type EncodableRequestOf, type EncodableResponseOf,
} from './messages.js';
export { int64ToNumber, type Given, type Incoming, type Outgoing } from './shapes.js';
