// The shape of svc's error classes: a stable code for programs, a message for people, the class name as name.
export class CodedError<C extends string = string> extends Error {
  constructor(
    readonly code: C,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}
