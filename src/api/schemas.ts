import { Type } from "typebox";

/** Every v2 route accepts the key as a query parameter (or header x-stl-key). */
export const KeyQuery = Type.Object({ key: Type.Optional(Type.String({ description: "API key" })) });

export const SuccessCreated = Type.Object({
  name: Type.String(),
  status: Type.Literal("success"),
  uuid: Type.String({ format: "uuid" }),
});

export const LoginEmailBody = Type.Object({
  insight_login_email: Type.String({ minLength: 3, maxLength: 254 }),
});
