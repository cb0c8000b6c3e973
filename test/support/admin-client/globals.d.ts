// The generated client names the fetch API's BodyInit, a DOM type that Node's typings provide
// only as the Response constructor's parameter; this project compiles without the DOM library.
type BodyInit = NonNullable<ConstructorParameters<typeof Response>[0]>;
